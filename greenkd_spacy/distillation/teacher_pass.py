"""The teacher pass: the cache keys of a run's targets, and one pass of the teacher
over the distillation corpus into those caches.

Apart from the loop (loop.py) because it is the one step whose cost grows with the
transfer text and that a later run can skip: a cache that is complete for the same
teacher, settings and corpus, or for a longer corpus this one is the start of, is read
instead of running the teacher again (cache.py holds the records; annotate.py runs the
teacher, locally or on Ray).
"""
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

from spacy.attrs import ORTH, POS, SENT_START
from spacy.language import Language
from spacy.parts_of_speech import NAMES as POS_NAMES
from spacy.tokens import Doc
from spacy.training import Example

from .annotate import annotate
from .cache import Fingerprint, TeacherCache
from .targets import is_silver


class TeacherKeys(NamedTuple):
    """The cache keys of a run's teacher pass (see teacher_fingerprints)."""

    prints: List[str]
    n_examples: Optional[int]
    # Where the corpus is the first `n_examples` of a longer one (its text read up to a
    # limit: CorpusKey.whole), the keys that corpus's caches have: a cache complete for
    # it holds a record for every doc of this one (records are found by doc key).
    whole: Optional[List[str]] = None


def teacher_fingerprints(
    teacher: Language, keys: List[Tuple[str, Dict]], corpus: Callable[[Language], Iterable[Example]], nlp: Language
) -> TeacherKeys:
    """For each (teacher component, settings) in ``keys``: the hash of the teacher's
    weights (that component and everything before it), the settings that shape its
    targets and the corpus as the student will see it; and the number of examples where
    known (so the teacher pass can show an ETA).

    A corpus that names its content (``content_key``, data/source_key.py: greenkd's
    readers) is not read here: over a million unlabeled sentences, tokenizing them only
    to hash them took 19 minutes before the teacher pass. Any other corpus is read once
    for every key, its words, POS and sentence starts hashed and its examples counted (a
    pipeline student's tagger, morphologizer and parser are three keys; reading 70,000
    sentences once per key cost minutes before the first step)."""
    prints = []
    for teacher_name, settings in keys:
        fingerprint = Fingerprint().update(settings)
        for name, proc in teacher.pipeline:
            fingerprint.update_pipe(name, proc)
            if name == teacher_name:
                break
        prints.append(fingerprint)
    content_key = getattr(corpus, "content_key", None)
    source = content_key(nlp) if content_key is not None else None
    if source is not None:
        whole = None
        if source.whole is not None and source.size is not None:
            whole = [fingerprint.copy().update("corpus-source", source.whole).hexdigest() for fingerprint in prints]
        for fingerprint in prints:
            fingerprint.update("corpus-source", source.key)
        return TeacherKeys([fingerprint.hexdigest() for fingerprint in prints], source.size, whole)
    n_examples = 0
    for eg in corpus(nlp):
        n_examples += 1
        # Encoded once for every key; bytes enter the hash as update() would encode them.
        parts = [Fingerprint.encode(part) for part in doc_fingerprint_parts(eg.predicted)]
        for fingerprint in prints:
            fingerprint.update(*parts)
    return TeacherKeys([fingerprint.hexdigest() for fingerprint in prints], n_examples)


def doc_fingerprint_parts(doc: Doc) -> Tuple[List[str], List[str], Union[List[int], int]]:
    """What of a corpus doc enters the cache key: its words, their POS (a student may
    read gold POS) and, where set, its sentence starts (1 or 0 per token; 0 for a doc
    without them). The same values as `[t.text for t in doc]`, `[t.pos_ for t in doc]`
    and `[int(t.is_sent_start or 0) for t in doc]`, read from one array: making a Token
    per word cost more than the rest of a streamed corpus's fingerprint."""
    if not len(doc):
        return [], [], (0 if not doc.has_annotation("SENT_START") else [])
    orths, tags, sent_starts = doc.to_array([ORTH, POS, SENT_START]).T.tolist()
    strings = doc.vocab.strings
    words = [strings[orth] for orth in orths]
    pos = [POS_NAMES[tag] for tag in tags]
    if not doc.has_annotation("SENT_START"):
        return words, pos, 0
    # to_array gives SENT_START as uint64: -1 (not a start) wraps around.
    return words, pos, [int(value == 1) for value in sent_starts]


def worker_path(teacher: Union[str, Path]) -> str:
    """The teacher as other processes can load it: an absolute path, or a package name."""
    path = Path(teacher)
    return str(path.resolve()) if path.exists() else str(teacher)


def teacher_pass(
    teacher_nlp: Language,
    teacher: Union[str, Path, Language],
    student: Language,
    pairs: List[Tuple[str, Any, Any]],
    train_corpus: Callable[[Language], Iterable[Example]],
    D: Dict[str, Any],
    *,
    backend: str,
    workers: int,
    address: Optional[str],
    stderr: IO,
) -> Tuple[Dict[str, Any], Dict[str, TeacherCache]]:
    """Fill the teacher cache of every (student name, student pipe, teacher pipe) pair,
    once per (teacher, corpus, settings), from the resolved [distillation] settings `D`;
    RETURNS the annotation summary per component and the caches."""
    summary: Dict[str, Any] = {}
    caches = {}
    pending = []
    keys = []
    for _, pipe, teacher_pipe in pairs:
        settings = dict(pipe.teacher_settings(), labels=list(teacher_pipe.labels))
        if not is_silver(settings):
            settings["top_k"] = D["top_k"]
        keys.append((teacher_pipe.name, settings))
    fingerprints, n_examples, wholes = teacher_fingerprints(teacher_nlp, keys, train_corpus, student)
    sharing: Dict[str, str] = {}  # student pipe -> the pipe whose records it reads
    first: Dict[str, str] = {}
    for index, ((name, pipe, teacher_pipe), fingerprint) in enumerate(zip(pairs, fingerprints)):
        if fingerprint in first:
            # The same records (e.g. a parser's trees for a parser and a senter
            # student): one cache, filled once, read by both.
            sharing[name] = first[fingerprint]
            caches[name] = caches[first[fingerprint]]
            continue
        first[fingerprint] = name
        cache = TeacherCache(Path(D["cache_dir"]), fingerprint)
        caches[name] = cache
        if cache.complete:
            stderr.write(f"Teacher cache {cache.directory} is complete; not running the teacher.\n")
            summary[name] = dict(cache.manifest.get("info", {}), reused=True)
            continue
        whole = TeacherCache(Path(D["cache_dir"]), wholes[index]) if wholes else None
        if whole is not None and whole.complete:
            stderr.write(
                f"Teacher cache {whole.directory} is complete for the whole text this run reads "
                f"the first {n_examples:,} examples of; not running the teacher.\n"
            )
            caches[name] = whole
            summary[name] = whole.prefix_summary(n_examples)
        else:
            pending.append((pipe, teacher_pipe, cache))
    if pending:
        # One pass of the teacher for every component whose targets are not cached yet.
        info = annotate(
            teacher_nlp, pending, train_corpus(student),
            top_k=D["top_k"], shard_size=D["shard_size"], total=n_examples,
            backend=backend, workers=workers, address=address,
            teacher_path=None if isinstance(teacher, Language) else worker_path(teacher),
            student_config=student.config, stderr=stderr,
        )
        labelled = {pipe.name for pipe, _, _ in pending}
        info["components"] = list(info["components"]) + [n for n, owner in sharing.items() if owner in labelled]
        for pipe, _, _ in pending:
            summary[pipe.name] = info
    for name, owner in sharing.items():
        summary[name] = summary[owner]
    return summary, caches
