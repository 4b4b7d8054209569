"""Which spans of a doc the parser turns into trees.

Rule (also in the README): one tree per sentence. Sentences are the doc's own
boundaries when it has any (gold, a `senter`, a `sentencizer` or an earlier parse);
otherwise spaCy's rule-based Sentencizer splits on sentence-final punctuation. A
sentence longer than ``max_length`` tokens is parsed as consecutive chunks of at most
``max_length`` tokens, each its own tree, so time and memory stay linear in doc length
(the biaffine scores are quadratic only within a chunk).
"""
import warnings
from typing import Iterable, List, Optional, Sequence

from spacy.pipeline import Sentencizer
from spacy.tokens import Doc

from ..errors import Warnings
from ..types import Segment

_SENTENCIZER = Sentencizer()


def sentence_starts(doc: Doc) -> List[int]:
    """Token offsets where sentences start: the doc's own, else punctuation rules."""
    if len(doc) == 0:
        return []
    if doc.has_annotation("SENT_START"):
        return [sent.start for sent in doc.sents]
    guesses = _SENTENCIZER.predict([doc])[0]
    return [i for i, is_start in enumerate(guesses) if i == 0 or is_start]


def split_long(start: int, end: int, max_length: int) -> Iterable[Segment]:
    for chunk_start in range(start, end, max_length):
        yield (-1, chunk_start, min(chunk_start + max_length, end))


def segments_from_starts(
    doc_index: int, starts: Sequence[int], n_tokens: int, max_length: int, given: bool = False
) -> List[Segment]:
    """Turn sentence starts into (doc, start, end) segments of bounded length.
    ``given``: the starts came with the doc (a senter, gold), not from the rules, which
    changes what the warning for an over-long sentence advises."""
    bounds = list(starts) + [n_tokens]
    segments = []
    for start, end in zip(bounds, bounds[1:]):
        if end <= start:
            continue
        if end - start > max_length:
            n_chunks = -(-(end - start) // max_length)
            message = Warnings.W005 if given else Warnings.W001
            warnings.warn(message.format(length=end - start, max_length=max_length, n_chunks=n_chunks))
        for _, chunk_start, chunk_end in split_long(start, end, max_length):
            segments.append((doc_index, chunk_start, chunk_end))
    return segments


def doc_segments(
    docs: Sequence[Doc],
    max_length: int,
    starts: Optional[Sequence[Optional[Sequence[int]]]] = None,
) -> List[Segment]:
    """Segments of a batch of docs; ``starts[i]``, where given, overrides doc i's own
    boundaries (training uses the gold sentences)."""
    segments: List[Segment] = []
    for i, doc in enumerate(docs):
        if starts is not None and starts[i] is not None:
            doc_starts, given = starts[i], True
        else:
            doc_starts, given = sentence_starts(doc), doc.has_annotation("SENT_START")
        segments.extend(segments_from_starts(i, doc_starts, len(doc), max_length, given))
    return segments
