"""Labeled text classification files: SST-2 (GLUE TSV), TREC (latin-1 `COARSE:fine
question`) and labeled JSONL (IMDB), read with errors that name the file and line, and
turned into docs with exclusive cats."""
import json
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.language import Language

from ..errors import Errors
from .text_corpus import REENCODE_FIX, PathLike, read_lines

LABELED_FORMATS = ("sst2", "trec", "jsonl")
SST2_LABELS = {"0": "negative", "1": "positive"}
IMDB_LABELS = {0: "negative", 1: "positive", "0": "negative", "1": "positive", "neg": "negative", "pos": "positive"}


def read_labeled(path: PathLike, fmt: str) -> Iterator[Tuple[str, str]]:
    """(text, label) pairs of a labeled file.

    fmt: "sst2" (TSV with header `sentence<TAB>label`, labels 0/1), "trec" (latin-1,
    `COARSE:fine question`, coarse label kept) or "jsonl" ({"text", "label"}, gzip ok).
    Malformed lines stop with an error naming the file and line.
    """
    path = Path(path)
    if fmt not in LABELED_FORMATS:
        raise ValueError(Errors.E027.format(fmt=fmt, formats=LABELED_FORMATS))
    if not path.exists():
        raise ValueError(Errors.E023.format(path=path))
    if fmt == "jsonl":
        yield from _read_labeled_jsonl(path)
        return
    encoding = "latin-1" if fmt == "trec" else "utf8"
    # TREC files are latin-1; a user who picked another format for one needs --format trec.
    decode_fix = REENCODE_FIX + " (TREC files are latin-1: convert them with --format trec.)"
    for line_no, line in read_lines(path, encoding=encoding, decode_fix=decode_fix):
        if not line.strip():
            continue
        if fmt == "sst2":
            if line_no == 1 and line.split("\t")[0] == "sentence":
                continue
            fields = line.split("\t")
            if len(fields) != 2 or fields[1].strip() not in SST2_LABELS:
                raise ValueError(Errors.E028.format(path=path, line=line_no, expected="sentence<TAB>0|1", got=line[:80]))
            yield fields[0].strip(), SST2_LABELS[fields[1].strip()]
        else:
            label, _, text = line.partition(" ")
            coarse = label.split(":", 1)[0]
            if ":" not in label or not coarse.isupper() or not text.strip():
                raise ValueError(Errors.E028.format(path=path, line=line_no, expected="COARSE:fine question", got=line[:80]))
            yield text.strip(), coarse


def _read_labeled_jsonl(path: Path) -> Iterator[Tuple[str, str]]:
    for line_no, line in read_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(Errors.E024.format(path=path, line=line_no, error=err)) from None
        label = record.get("label") if isinstance(record, dict) else None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str) or label is None:
            raise ValueError(Errors.E028.format(path=path, line=line_no, expected='{"text": ..., "label": ...}', got=line[:80]))
        yield record["text"].replace("<br />", " "), IMDB_LABELS.get(label, str(label))


def labels_of(pairs: Iterable[Tuple[str, str]]) -> List[str]:
    return sorted({label for _, label in pairs})


def cats_for(label: str, labels: List[str]) -> Dict[str, float]:
    return {name: float(name == label) for name in labels}


def docs_from_labeled(nlp: Language, pairs: List[Tuple[str, str]], labels: Optional[List[str]] = None):
    """Tokenized docs with exclusive cats, for a .spacy DocBin."""
    labels = labels or labels_of(pairs)
    for doc, (_, label) in zip(nlp.tokenizer.pipe(text for text, _ in pairs), pairs):
        doc.cats = cats_for(label, labels)
        yield doc
