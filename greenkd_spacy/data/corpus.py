"""greenkd.Corpus.v1: spaCy's Corpus with control over what gold annotation the
predicted docs start with.

The biaffine parser paper parses gold tokens with gold sentence boundaries and gold
UPOS ("paper setting"). spaCy's own reader re-tokenizes the text unless gold_preproc
is set, and never copies POS. This reader keeps spaCy's Corpus for reading and
shuffling and only changes the predicted side of each Example:
- gold_tokens: the predicted doc has the reference's words and spaces;
- gold_sents: ... and its sentence boundaries;
- gold_pos: ... and its UPOS (the paper setting; off for the realistic setting, where
  POS comes from a tagger listed in [training] annotating_components, or not at all).
"""
from pathlib import Path
from typing import Callable, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Corpus, Example
from spacy.training.augment import dont_augment
from spacy.training.corpus import walk_corpus
from spacy.util import registry
from spacy.vocab import Vocab

from ..errors import Errors
from .source_key import CorpusKey, combine, files_digest, tokenizer_digest


@registry.readers("greenkd.Corpus.v1")
def create_corpus_reader(
    path: Optional[Path],
    gold_preproc: bool = False,
    max_length: int = 0,
    limit: int = 0,
    shuffle: bool = False,
    gold_tokens: bool = True,
    gold_sents: bool = True,
    gold_pos: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Read .spacy files and seed the predicted docs with chosen gold annotation.

    path (Optional[Path]): A .spacy file or a directory of them.
    gold_preproc (bool): One example per gold sentence, as in spaCy's Corpus.
    max_length (int): Split longer docs into sentences (0: no limit).
    limit (int): Read at most this many docs (0: all).
    shuffle (bool): Shuffle the docs.
    gold_tokens (bool): Use the reference tokenization instead of the tokenizer's.
    gold_sents (bool): Copy the reference sentence boundaries (needs gold_tokens).
    gold_pos (bool): Copy the reference UPOS (needs gold_tokens): the paper setting.
    RETURNS (Callable[[Language], Iterable[Example]]): The corpus reader.
    """
    if path is None or not Path(path).exists():
        raise ValueError(Errors.E004.format(path=path))
    corpus = Corpus(
        path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, shuffle=shuffle
    )
    return GoldSeededCorpus(corpus, gold_tokens, gold_sents, gold_pos)


@registry.readers("greenkd.DevCorpus.v1")
def create_dev_reader(path: Optional[Path] = None) -> Callable[[Language], Iterable[Example]]:
    """A dev set that may be left out: spaCy's Corpus of `path`, or, with path null,
    none, and `spacy distill` makes one (the teacher labels the first texts of the
    distillation corpus, [distillation] heldout). spaCy's own reader refuses a null path
    when the config is resolved, so a config whose dev set is optional could not pass
    `spacy debug config`.

    path (Optional[Path]): A .spacy file or a directory of them, or None.
    """
    if path is None:
        return NoDevData()
    if not Path(path).exists():
        raise ValueError(Errors.E004.format(path=path))
    return Corpus(path)


class NoDevData:
    """The dev corpus of a config that gives none (path None: distillation.heldout's
    has_no_data); reading it says how to give one."""

    path = None

    def __call__(self, nlp: Language) -> Iterator[Example]:
        raise ValueError(Errors.E061)


def _read_docbin(path: Path) -> DocBin:
    """One .spacy file; a wrong or truncated file is named in the error (spaCy's own
    E1014 does not say which file of a corpus it was)."""
    try:
        return DocBin().from_disk(path)
    except ValueError as err:
        raise ValueError(Errors.E043.format(path=path, size=path.stat().st_size, error=err)) from None


def load_docs(path: Union[str, Path], vocab: Vocab, *, purpose: str = "evaluate") -> List[Doc]:
    """Every doc of a .spacy file or a directory of them, for a command that needs them all.

    path (Union[str, Path]): A .spacy file or a directory of .spacy files.
    vocab (Vocab): The vocab of the pipeline that will read the docs.
    purpose (str): What the docs are for, said in the error when there are none.
    RETURNS (List[Doc]): The docs, in file order.
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(Errors.E004.format(path=path))
    docs: List[Doc] = []
    for file_path in walk_corpus(path, ".spacy"):
        docs.extend(_read_docbin(Path(file_path)).get_docs(vocab))
    if not docs:
        raise ValueError(Errors.E044.format(path=path, purpose=purpose))
    return docs


def check_docbins(path: Union[str, Path]) -> None:
    """Raise E043 naming the first unreadable .spacy file under path."""
    for file_path in walk_corpus(path, ".spacy"):
        _read_docbin(Path(file_path))


class GoldSeededCorpus:
    def __init__(self, corpus: Corpus, gold_tokens: bool, gold_sents: bool, gold_pos: bool):
        self.corpus = corpus
        self.gold_tokens = gold_tokens or gold_sents or gold_pos
        self.gold_sents = gold_sents
        self.gold_pos = gold_pos

    def __call__(self, nlp: Language) -> Iterator[Example]:
        count = 0
        try:
            for eg in self.corpus(nlp):
                count += 1
                yield self._seed(nlp, eg)
        except ValueError as err:
            if "E1014" in str(err):  # spaCy's "not DocBin data", which names no file
                check_docbins(self.corpus.path)
            raise
        if count == 0:
            raise ValueError(Errors.E044.format(path=self.corpus.path, purpose="train or evaluate on"))

    def content_key(self, nlp: Language) -> Optional[CorpusKey]:
        """The .spacy files' bytes, the reading settings and the tokenizer (which makes
        the predicted docs unless gold_tokens); None where reading is not repeatable
        (shuffled or augmented: every read differs) or the tokenizer cannot be named."""
        corpus = self.corpus
        tokenizer = tokenizer_digest(nlp)
        if tokenizer is None or corpus.shuffle or corpus.augmenter is not dont_augment:
            return None
        files = [Path(path) for path in walk_corpus(corpus.path, ".spacy")]
        settings = (corpus.gold_preproc, corpus.max_length, corpus.limit, self.gold_tokens, self.gold_sents, self.gold_pos)
        size = None
        if not corpus.gold_preproc and not corpus.max_length:
            # Docs, as Corpus yields them (it skips empty ones), from each DocBin's token
            # arrays without making the Docs; gold_preproc and max_length yield
            # sentences, which only reading can count.
            size = sum(sum(1 for tokens in _read_docbin(path).tokens if len(tokens)) for path in files)
            size = min(size, corpus.limit) if corpus.limit else size
        key = combine("greenkd.Corpus.v1", files_digest(files), settings, tokenizer)
        return CorpusKey(key, size)

    def _seed(self, nlp: Language, eg: Example) -> Example:
        if not self.gold_tokens:
            return eg
        ref = eg.reference
        sent_starts = None
        if self.gold_sents and ref.has_annotation("SENT_START"):
            sent_starts = [bool(token.is_sent_start) for token in ref]
        pos = None
        if self.gold_pos and ref.has_annotation("POS"):
            pos = [token.pos_ or None for token in ref]
        predicted = Doc(
            nlp.vocab,
            words=[token.text for token in ref],
            spaces=[bool(token.whitespace_) for token in ref],
            sent_starts=sent_starts,
            pos=pos,
        )
        return Example(predicted, ref)
