"""Checking CoNLL-U files before spaCy's converter reads them.

spaCy's `conllu_to_docs` assumes a well-formed file: a line with nine columns fails with
"not enough values to unpack", a head out of range with a relative-index error that
names no line, and a cycle is accepted and only breaks a parser later. The treebanks
users bring are often hand-edited, so `check_conllu` walks the file once and stops at
the first problem with its file, line and the fix. What CoNLL-U allows but a basic
dependency tree does not use is skipped and counted, as spaCy's converter does:
multiword-token ranges (``3-4``) keep their parts as tokens, empty nodes (``8.1``,
enhanced dependencies only) are left out.
"""
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Tuple, Union

import spacy

from ..errors import Errors
from .text_corpus import read_lines

N_COLUMNS = 10


@dataclass
class ConlluStats:
    """What a check saw: sentences, tokens and what was skipped."""

    sentences: int = 0
    tokens: int = 0
    multiword_ranges: int = 0
    empty_nodes: int = 0
    labels: Dict[str, int] = field(default_factory=dict)


def _fail(path: Path, line: int, problem: str, fix: str) -> ValueError:
    return ValueError(Errors.E034.format(path=path, line=line, problem=problem, fix=fix))


def _sentences(path: Path) -> Iterator[List[Tuple[int, str]]]:
    """Token and comment lines of each sentence, with their 1-based line numbers."""
    block: List[Tuple[int, str]] = []
    for line_no, line in read_lines(path):
        if line.strip():
            block.append((line_no, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def _check_tree(path: Path, rows: List[Tuple[int, int, int]]) -> None:
    """rows: (line, id, head). One root, and every token reaches it (no cycle)."""
    heads = {token_id: head for _, token_id, head in rows}
    lines = {token_id: line for line, token_id, _ in rows}
    roots = [token_id for token_id, head in heads.items() if head == 0]
    if len(roots) != 1:
        where = lines[roots[1]] if roots else rows[0][0]
        raise _fail(
            path, where,
            f"the sentence has {len(roots)} tokens with HEAD 0 (a dependency tree has exactly one root)",
            "attach all but one root to another token",
        )
    reaches_root = {0}
    for token_id in heads:
        seen = []
        node = token_id
        while node not in reaches_root:
            if node in seen:
                raise _fail(
                    path, lines[token_id],
                    f"the heads form a cycle ({' -> '.join(map(str, seen + [node]))})",
                    "correct the HEAD column so that every token leads to the root",
                )
            seen.append(node)
            node = heads[node]
        reaches_root.update(seen)


def check_conllu(path: Union[str, Path]) -> ConlluStats:
    """Validate a CoNLL-U file for dependency parsing.

    path (Union[str, Path]): The .conllu file.
    RETURNS (ConlluStats): Counts of sentences, tokens, labels and skipped lines.
    RAISES ValueError: at the first malformed line, naming file, line and fix.
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(Errors.E023.format(path=path))
    stats = ConlluStats()
    for block in _sentences(path):
        rows: List[Tuple[int, int, int]] = []
        for line_no, line in block:
            if line.startswith("#"):
                continue
            columns = line.split("\t")
            if len(columns) != N_COLUMNS:
                raise _fail(
                    path, line_no,
                    f"expected {N_COLUMNS} tab-separated columns, found {len(columns)}",
                    "separate the columns with single tabs (spaces inside FORM are fine)",
                )
            token_id, head, deprel = columns[0], columns[6], columns[7]
            if "-" in token_id:
                stats.multiword_ranges += 1
                continue
            if "." in token_id:
                stats.empty_nodes += 1
                continue
            if not token_id.isdigit() or int(token_id) != len(rows) + 1:
                raise _fail(
                    path, line_no,
                    f"token ID '{token_id}' where {len(rows) + 1} was expected",
                    "number the words of each sentence 1, 2, 3, ... (ranges 'a-b' and empty nodes 'a.b' may come between)",
                )
            if not head.isdigit():
                raise _fail(path, line_no, f"HEAD '{head}' is not a number", "set HEAD to the ID of the token's head, or 0 for the root")
            if deprel in ("", "_"):
                raise _fail(path, line_no, "DEPREL is empty", "give every word a dependency label")
            rows.append((line_no, int(token_id), int(head)))
            stats.labels[deprel] = stats.labels.get(deprel, 0) + 1
        if not rows:
            continue
        for line_no, _, head in rows:
            if head > len(rows):
                raise _fail(
                    path, line_no,
                    f"HEAD {head} is out of range (the sentence has {len(rows)} words)",
                    "point HEAD at a word of the same sentence, or 0 for the root",
                )
        _check_tree(path, rows)
        stats.sentences += 1
        stats.tokens += len(rows)
    if stats.sentences == 0:
        raise _fail(path, 1, "the file has no sentence", "check that this is a CoNLL-U file with word lines")
    return stats


def spacy_lang_for(treebank: Union[str, Path]) -> str:
    """The `[nlp] lang` to train a UD treebank with: the ISO code its files start with
    (`ta_ttb-ud-train.conllu` -> "ta") where spaCy has a class for it, else "xx"
    (spaCy's multi-language class: whitespace and punctuation tokenization)."""
    code = Path(treebank).name.split("_", 1)[0].split("-", 1)[0].lower()
    try:
        spacy.util.get_lang_class(code)
    except (ImportError, KeyError):
        return "xx"
    return code
