"""Streamed unlabeled text and the corpus readers built on it.

- `iter_texts` streams raw text of any size: .txt / .txt.gz (one doc per non-empty
  line) or .jsonl / .jsonl.gz (a text field), so an unlabeled corpus never has to fit
  in memory.
- `greenkd.TextFile.v1` wraps it as a spaCy corpus reader (examples without cats: the
  distillation loop then trains on the teacher's KL only).
- `greenkd.DistillCorpus.v1` reads the task's train set, then unlabeled text: the
  paper's distillation corpus D_train + C.
(Labeled SST-2 / TREC / IMDB files: data/labeled.py.)
"""
import codecs
import gzip
import json
import warnings
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import minibatch, registry
from spacy.vocab import Vocab

from ..errors import Errors, Warnings
from .source_key import CorpusKey, combine, files_digest, tokenizer_digest

PathLike = Union[str, Path]


# What to do about a file that is not UTF-8, for readers that know no other encoding.
REENCODE_FIX = "Re-encode the file as UTF-8, e.g. `iconv -f latin1 -t utf8 IN > OUT`."


def open_bytes(path: Path) -> BinaryIO:
    """A plain or gzipped (by its .gz suffix) file, opened for reading bytes."""
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_lines(
    path: Path, encoding: str = "utf8", *, decode_fix: str = REENCODE_FIX
) -> Iterator[Tuple[int, str]]:
    """(line number, text) of a plain or gzipped file, decoded one line at a time.

    A text-mode file object decodes ahead in blocks, so its UnicodeDecodeError names
    no line (or the wrong one); decoding each line's bytes ourselves lets a bad byte be
    reported at the line that holds it.
    """
    with open_bytes(path) as file_:
        for line_no, raw in enumerate(file_, start=1):
            if line_no == 1 and raw.startswith(codecs.BOM_UTF8) and encoding.replace("-", "").lower() in ("utf8", "utf8sig"):
                # A byte-order mark (Windows editors write one) is not text: left in, it
                # became part of the first token ('\ufeff-DOCSTART-', '\ufeffEU').
                raw = raw[len(codecs.BOM_UTF8):]
                warnings.warn(Warnings.W004.format(path=path))
            try:
                yield line_no, raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise ValueError(
                    Errors.E026.format(path=path, line=line_no, error=err, fix=decode_fix)
                ) from None


def _is_jsonl(path: Path) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return name.endswith(".jsonl") or name.endswith(".json")


def iter_texts(path: PathLike, *, limit: int = 0, text_key: str = "text") -> Iterator[str]:
    """Stream the texts of a file, or of every file in a directory (sorted by name).

    path (PathLike): .txt, .txt.gz, .jsonl or .jsonl.gz, or a directory of them.
    limit (int): Stop after this many texts (0: all).
    text_key (str): The field holding the text in JSONL records.
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(Errors.E023.format(path=path))
    count = 0
    for file_path in text_files(path):
        jsonl = _is_jsonl(file_path)
        for line_no, line in read_lines(file_path):
            line = line.strip()
            if not line:
                continue
            if jsonl:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(Errors.E024.format(path=file_path, line=line_no, error=err)) from None
                if not isinstance(record, dict) or not isinstance(record.get(text_key), str):
                    raise ValueError(Errors.E025.format(path=file_path, line=line_no, key=text_key))
                text = record[text_key]
            else:
                text = line
            yield text
            count += 1
            if limit and count >= limit:
                return


def text_files(path: PathLike) -> List[Path]:
    """The files iter_texts reads, in its order."""
    path = Path(path)
    return sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]


def count_texts(path: PathLike, limit: int = 0) -> int:
    """How many texts iter_texts yields (non-empty lines; capped by limit), counted on
    the raw bytes: a progress bar's total without decoding or tokenizing anything."""
    count = 0
    for file_path in text_files(path):
        with open_bytes(file_path) as file_:
            for raw in file_:
                if raw.strip():
                    count += 1
                    if limit and count >= limit:
                        return count
    return count


class TextCorpus:
    """Unlabeled text as examples (reference = predicted, no cats), streamed; it names
    its content without being read (source_key.py)."""

    def __init__(self, path: Optional[PathLike], limit: int = 0, text_key: str = "text", texts_per_doc: int = 1):
        # None (paths left null) resolves, as spaCy's Corpus does, so that a config
        # whose text comes on the command line passes `spacy debug config`; reading it
        # says what is missing.
        if path is not None and not Path(path).exists():
            raise ValueError(Errors.E023.format(path=path))
        if texts_per_doc < 1:
            raise ValueError(Errors.E082.format(value=texts_per_doc))
        self.path = Path(path) if path is not None else None
        self.limit = limit
        self.text_key = text_key
        self.texts_per_doc = texts_per_doc

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.path is None:
            raise ValueError(Errors.E060)
        texts = iter_texts(self.path, limit=self.limit, text_key=self.text_key)
        if self.texts_per_doc == 1:
            docs = (nlp.make_doc(text) for text in texts)
        else:
            docs = (joined_doc(nlp, group) for group in minibatch(texts, self.texts_per_doc))
        for doc in docs:
            yield Example(doc, doc.copy())

    def content_key(self, nlp: Language) -> Optional[CorpusKey]:
        tokenizer = tokenizer_digest(nlp)
        if tokenizer is None or self.path is None:
            return None
        files = files_digest(text_files(self.path))

        def key(limit: int) -> str:
            parts = [files, limit, self.text_key, tokenizer]
            if self.texts_per_doc != 1:
                # Only when set: the keys of teacher passes cached before the option
                # existed stay valid.
                parts.append(f"texts_per_doc={self.texts_per_doc}")
            return combine("greenkd.TextFile.v1", *parts)

        texts = count_texts(self.path, self.limit)
        # The first `limit` texts are the whole file's first docs, unless the limit
        # cuts a doc of several texts short (that doc is not one of the whole file's).
        whole = key(0) if self.limit and self.limit % self.texts_per_doc == 0 else None
        return CorpusKey(key(self.limit), -(-texts // self.texts_per_doc), whole)


def joined_doc(nlp: Language, texts: List[str]) -> Doc:
    """One doc of several texts, each tokenized on its own and starting a sentence (the
    tokens within a text keep no boundary: a pipeline may still split it). A model
    trained on one sentence per doc never sees a sentence end inside its input, and a
    BiLSTM reading a user's whole document then carries one sentence into the next."""
    parts = [nlp.make_doc(text) for text in texts]
    doc = Doc.from_docs(parts, ensure_whitespace=True)
    start = 0
    for part in parts:
        if len(part):
            doc[start].is_sent_start = True
        start += len(part)
    return doc


@registry.readers("greenkd.TextFile.v1")
def create_text_reader(
    path: Optional[PathLike], limit: int = 0, text_key: str = "text", texts_per_doc: int = 1
) -> Callable[[Language], Iterable[Example]]:
    """Unlabeled text as examples (reference = predicted, no cats), streamed.

    path (Optional[PathLike]): See iter_texts; None (a path given on the command line)
        is an error when the corpus is read.
    limit (int): Read at most this many texts (0: all).
    text_key (str): JSONL field with the text.
    texts_per_doc (int): Join this many consecutive texts into one doc, each text
        starting a sentence (1: one doc per text). For one sentence per line, a few per
        doc teach a student that reads across sentences where they end.
    """
    return TextCorpus(path, limit, text_key, texts_per_doc)


@registry.readers("greenkd.DistillCorpus.v1")
def create_distill_reader(
    train: Optional[PathLike] = None,
    text: Optional[PathLike] = None,
    text_limit: int = 0,
    text_key: str = "text",
    gold_preproc: bool = False,
    gold_tokens: bool = False,
    gold_sents: bool = False,
    texts_per_doc: int = 1,
) -> Callable[[Language], Iterable[Example]]:
    """The paper's distillation corpus D_train + C: a labeled .spacy corpus followed by
    unlabeled text, both streamed. Either may be null.

    train (Optional[PathLike]): .spacy file or directory (its gold annotation adds the
        gold term).
    text (Optional[PathLike]): Unlabeled text; see iter_texts. For a parser, one
        sentence per line: each line is parsed as one doc.
    text_limit (int): Read at most this many unlabeled texts (0: all).
    text_key (str): JSONL field with the text.
    gold_preproc (bool): One labeled example per gold sentence, as in spaCy's Corpus.
    gold_tokens (bool): The labeled docs keep their gold tokenization (as
        greenkd.Corpus.v1 does), so gold heads line up with the student's tokens.
    gold_sents (bool): ... and their gold sentence boundaries.
    texts_per_doc (int): Join this many consecutive unlabeled texts into one doc, each
        starting a sentence (see greenkd.TextFile.v1).
    """
    from .corpus import create_corpus_reader

    for path in (train, text):
        if path is not None and not Path(path).exists():
            raise ValueError(Errors.E023.format(path=path))
    labeled = create_corpus_reader(
        train, gold_preproc=gold_preproc, gold_tokens=gold_tokens, gold_sents=gold_sents
    ) if train is not None else None
    unlabeled = create_text_reader(text, text_limit, text_key, texts_per_doc) if text is not None else None

    return DistillCorpus(labeled, unlabeled)


class DistillCorpus:
    """A labeled corpus, then unlabeled text; named without being read where both
    parts can name themselves (source_key.py)."""

    def __init__(self, labeled: Optional[Callable], unlabeled: Optional[TextCorpus]):
        self.labeled = labeled
        self.unlabeled = unlabeled

    def __call__(self, nlp: Language) -> Iterator[Example]:
        if self.labeled is not None:
            yield from self.labeled(nlp)
        if self.unlabeled is not None:
            yield from self.unlabeled(nlp)

    def content_key(self, nlp: Language) -> Optional[CorpusKey]:
        parts = [part.content_key(nlp) if part is not None else CorpusKey("none", 0) for part in (self.labeled, self.unlabeled)]
        if any(part is None for part in parts):
            return None
        sizes = [part.size for part in parts]
        size = None if None in sizes else sum(sizes)
        labeled, unlabeled = parts
        # The labeled part comes first, whole: a limit on the text leaves a prefix of
        # the corpus with all of the text.
        whole = None
        if unlabeled.whole is not None and labeled.whole is None:
            whole = combine("greenkd.DistillCorpus.v1", labeled.key, unlabeled.whole)
        return CorpusKey(combine("greenkd.DistillCorpus.v1", *(part.key for part in parts)), size, whole)


def texts_of(path: Union[str, Path], vocab: Vocab, *, limit: int = 0, purpose: str = "evaluate") -> Tuple[List[str], Optional[List[Doc]]]:
    """The texts a command runs pipelines on, from raw text (.txt[.gz], .jsonl[.gz]) or
    a .spacy corpus, whose docs come back too (their annotation can be scored as gold).

    limit (int): The first N texts (0: all).
    RETURNS (Tuple[List[str], Optional[List[Doc]]]): The texts, and the docs of a .spacy
        corpus (None for raw text).
    """
    from .corpus import load_docs  # corpus.py reads raw text through this module

    path = Path(path)
    if path.suffix == ".spacy" or path.is_dir() and any(path.glob("*.spacy")):
        docs = load_docs(path, vocab, purpose=purpose)
        docs = docs[:limit] if limit else docs
        return [doc.text for doc in docs], docs
    return list(iter_texts(path, limit=limit)), None
