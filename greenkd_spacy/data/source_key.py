"""What a corpus will yield, named without reading it: the key of the teacher cache.

The teacher cache is keyed by the corpus as the student sees it. Reading that means
tokenizing every text, and over a million unlabeled sentences the reading alone took
19 minutes before the teacher pass could begin (benchmarks/archive/stream_rss.json):
the pass then reads the same texts again. A reader that knows where its docs come from
can say the same thing from its sources: the bytes of its files, its settings and the
tokenizer that turns text into docs. Our readers offer it as

    reader.content_key(nlp) -> Optional[CorpusKey]

and the distillation loop uses it where present (None: "read me"), falling back to
reading the docs for any other reader, such as spaCy's own Corpus.
"""
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Union

import spacy
from spacy.language import Language

from ..digest import Digest

# Files are hashed in blocks of this many bytes (memory stays flat for any file size).
BLOCK = 1 << 20


@dataclass(frozen=True)
class CorpusKey:
    """key: hex SHA-256 of the corpus's sources and settings; size: how many examples
    it yields where that is cheap to know (a progress bar's total), else None; whole:
    where the corpus is the first `size` examples of a longer one (a text file read up
    to a limit), that corpus's key. A teacher pass paid for the whole corpus then serves
    its prefixes too: the points of a transfer-size curve need no pass of their own."""

    key: str
    size: Optional[int] = None
    whole: Optional[str] = None


def files_digest(paths: Iterable[Union[str, Path]]) -> str:
    """SHA-256 over each file's base name and bytes, in the order given: the content,
    not the directory it lies in, decides the key."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        digest.update(path.name.encode("utf8") + b"\0")
        with path.open("rb") as file_:
            for block in iter(lambda: file_.read(BLOCK), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def tokenizer_digest(nlp: Language) -> Optional[str]:
    """The tokenizer's rules and exceptions, its language and spaCy's version: what
    decides the words of a text. None where the tokenizer cannot be serialized (a custom
    callable): then only reading the docs can say what they are. greenkd.CachedTokenizer.v1
    makes its spaCy tokenizer's tokens, so it has that tokenizer's digest: docs read with
    either share their teacher pass."""
    from ..tokenization.rules import unwrap

    tokenizer = unwrap(nlp.tokenizer)
    try:
        data = tokenizer.to_bytes(exclude=["vocab"])
    except Exception:  # custom tokenizers raise anything from TypeError to NotImplementedError
        return None
    digest = hashlib.sha256(data)
    digest.update(f"{nlp.lang}|{spacy.__version__}|{type(tokenizer).__module__}.{type(tokenizer).__qualname__}".encode())
    return digest.hexdigest()


def combine(*parts: object) -> str:
    """One key from sub-keys and settings, each part hashed as its repr (the encoding
    these keys were first written with: caches on disk keep their keys)."""
    return Digest().update(*(repr(part).encode("utf8") for part in parts)).hexdigest()
