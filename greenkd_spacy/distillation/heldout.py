"""A dev set from raw text alone: the first texts of the distillation corpus, held out
and labelled by the teacher.

A user who brings a pipeline and a file of text has no gold dev set, and a dev set is
what spaCy's loop selects model-best on. The teacher's own annotation of texts the
student never trains on is the right one here: the student is scored by its agreement
with the teacher, the question the user asks. The slice is labelled once and kept beside
the teacher cache, keyed by the teacher's weights and the texts, so a rerun or a resumed
run reads it instead of running the teacher again.
"""
import itertools
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from ..atomic import atomic_write_bytes
from ..data.source_key import CorpusKey, combine
from ..errors import Errors
from .cache import Fingerprint
from .segmentation import sentence_lengths

HELDOUT_DIR = "heldout"


def has_no_data(corpus: Any) -> bool:
    """Whether a dev corpus was given no data: spaCy's Corpus (and our readers) keep
    the path they read, None when [paths] left it null."""
    return hasattr(corpus, "path") and corpus.path is None


class SkipFirst:
    """The distillation corpus without its first `n` examples, which are the dev set.
    Keeps the corpus's cheap cache key (data/source_key.py) where it has one."""

    def __init__(self, corpus: Callable[[Language], Iterable[Example]], n: int):
        self.corpus = corpus
        self.n = n

    def __call__(self, nlp: Language) -> Iterator[Example]:
        return itertools.islice(self.corpus(nlp), self.n, None)

    def content_key(self, nlp: Language) -> Optional[CorpusKey]:
        inner = getattr(self.corpus, "content_key", None)
        source = inner(nlp) if inner is not None else None
        if source is None:
            return None
        size = None if source.size is None else max(0, source.size - self.n)
        return CorpusKey(combine("skip-first", source.key, self.n), size)

    def check_size(self, nlp: Language, name: str) -> None:
        """Stop before the teacher pass if nothing would be left to train on."""
        inner = getattr(self.corpus, "content_key", None)
        source = inner(nlp) if inner is not None else None
        if source is not None and source.size is not None and source.size <= self.n:
            raise ValueError(Errors.E055.format(corpus=name, size=source.size, heldout=self.n))


def silver_dev_set(
    teacher: Language,
    student: Language,
    corpus: Callable[[Language], Iterable[Example]],
    n: int,
    cache_dir: Path,
) -> Tuple[Callable[[Language], List[Example]], Dict[str, Any]]:
    """The teacher's annotation of the corpus's first `n` texts as a dev corpus.

    teacher (Language): The teacher pipeline; every enabled component annotates.
    student (Language): Tokenizes the texts as the student will see them.
    corpus (Callable): The whole distillation corpus (before SkipFirst).
    n (int): How many texts.
    cache_dir (Path): [distillation] cache_dir; the set goes to its heldout/ folder.
    RETURNS (Tuple[Callable, Dict]): The dev corpus (as spaCy's readers are called) and
        what it cost: docs, words, where it is, the teacher's wall and CPU seconds (0
        when it was read from an earlier run, `reused` then true).
    """
    texts = [eg.predicted.text for eg in itertools.islice(corpus(student), n)]
    fingerprint = Fingerprint().update("heldout", texts)
    for name, proc in teacher.pipeline:
        fingerprint.update_pipe(name, proc)
    path = Path(cache_dir) / HELDOUT_DIR / f"{fingerprint.hexdigest()[:24]}.spacy"
    info: Dict[str, Any] = {"docs": len(texts), "path": str(path)}
    if path.is_file():
        data = path.read_bytes()
        info.update(reused=True, wall_seconds=0.0, cpu_seconds=0.0)
    else:
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        docs = list(teacher.pipe(texts, batch_size=64))
        info.update(wall_seconds=time.perf_counter() - start_wall, cpu_seconds=time.process_time() - start_cpu)
        # Serialized once: the bytes on disk are the bytes the dev corpus reads.
        data = DocBin(docs=docs, store_user_data=False).to_bytes()
        atomic_write_bytes(path, data)
    labelled = list(DocBin().from_bytes(data).get_docs(student.vocab))
    info["words"] = sum(len(doc) for doc in labelled)
    info["sentences"] = sentence_lengths(labelled)

    def dev_corpus(nlp: Language) -> List[Example]:
        references: List[Doc] = list(DocBin().from_bytes(data).get_docs(nlp.vocab))
        return [Example(nlp.make_doc(doc.text), doc) for doc in references]

    return dev_corpus, info
