"""Readers for CoNLL-2003 (NER) and CoNLL-2000 (chunking) column files.

CoNLL-2003: ``word POS chunk NER`` with IOB1 tags (B- only between two adjacent spans of
the same type) and ``-DOCSTART-`` lines between articles. CoNLL-2000: ``word POS chunk``
with IOB2 tags. spaCy's `iob_to_biluo` reads both IOB flavours, so one reader serves:
entities go to doc.ents, chunks to doc.spans[key]. A malformed line stops the reader
with its file and line number.
"""
from pathlib import Path
from typing import Iterator, List, Tuple

from spacy.tokens import Doc
from spacy.training import biluo_tags_to_spans, iob_to_biluo
from spacy.vocab import Vocab

from ..errors import Errors
from .text_corpus import read_lines

FORMATS = {"conll03": 4, "conll00": 3}

Sentence = Tuple[List[str], List[str], List[str], int]  # words, POS, tags, first line


def read_sentences(path: Path, fmt: str) -> Iterator[Sentence]:
    """Sentences of a column file: (words, POS tags, span tags, line number)."""
    if fmt not in FORMATS:
        raise ValueError(Errors.E027.format(fmt=fmt, formats=tuple(FORMATS)))
    n_cols = FORMATS[fmt]
    path = Path(path)
    if not path.exists():
        raise ValueError(Errors.E023.format(path=path))
    words: List[str] = []
    pos: List[str] = []
    tags: List[str] = []
    first = 0
    for line_no, line in read_lines(path):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                yield words, pos, tags, first
            words, pos, tags = [], [], []
            continue
        if len(fields) != n_cols:
            raise ValueError(
                Errors.E028.format(path=path, line=line_no, expected=f"{n_cols} space-separated columns ({fmt})", got=line.strip()[:60])
            )
        tag = fields[-1]
        if tag != "O" and not (tag[:2] in ("B-", "I-") and len(tag) > 2):
            raise ValueError(Errors.E028.format(path=path, line=line_no, expected="an IOB tag (O, B-X or I-X)", got=tag))
        if not words:
            first = line_no
        words.append(fields[0])
        pos.append(fields[1])
        tags.append(tag)
    if words:
        yield words, pos, tags, first


def sentence_doc(
    vocab: Vocab, words: List[str], pos: List[str], tags: List[str], fmt: str, spans_key: str = "chunks", as_ents: bool = False
) -> Doc:
    """A doc for one sentence with its spans: doc.ents (conll03, or conll00 with
    as_ents, for spaCy's own `ner` as a chunking baseline) or doc.spans[key] (conll00).
    The POS column is kept as token.tag_ (PTB tags)."""
    doc = Doc(vocab, words=words, tags=pos)
    spans = biluo_tags_to_spans(doc, iob_to_biluo(tags))
    if fmt == "conll03" or as_ents:
        doc.set_ents(spans, default="outside")
    else:
        doc.spans[spans_key] = spans
    return doc
