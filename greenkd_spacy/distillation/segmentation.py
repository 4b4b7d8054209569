"""Whether the teacher splits its texts into sentences the way running text is split.

A parser trained on one gold sentence per doc (UD treebanks converted as they are) never
learns where sentences end: given a text of several sentences (a news article, a review)
it makes one tree of the whole text. A student learns such trees poorly and
greenkd_parser parses at most its max_sentence_length tokens as one tree, and nothing
fails: the pass and the training run to the end on trees no treebank has. So the
teacher's sentences are measured where it annotates: on the held-out dev texts before
the pass (W006), and shard by shard during the pass (W008), each said once, with the fix.
"""
import warnings
from typing import Any, Dict, Iterable, List, Optional

from spacy.tokens import Doc

from ..errors import Warnings

# A sentence longer than this is rare in running text (UD English-EWT: the longest of
# its 16,622 sentences has 159 tokens, and 0.24 % of its words are in sentences over 100).
LONG_SENTENCE = 100
# Warn when this share of the words (held-out texts, a shard) is in such sentences.
LONG_SHARE = 0.2


def sentence_lengths(docs: List[Doc]) -> Optional[Dict[str, Any]]:
    """How the teacher split the held-out texts into sentences: the count, the longest
    and the share of words in sentences over LONG_SENTENCE tokens; None when it sets no
    sentence boundaries."""
    counts = sentence_counts(docs)
    if counts is None:
        return None
    return {
        "count": counts["sentences"],
        "longest": counts["longest"],
        "long_share": round(counts["long_words"] / max(1, counts["words"]), 4),
    }


def check_segmentation(info: Dict[str, Any]) -> None:
    """Warn (W006) when the teacher's sentences on the held-out texts are mostly longer
    than running text's: a parser that never learned to segment, whose one tree per
    text no student learns well. Said before the teacher pass, which can take hours."""
    sentences = info.get("sentences")
    if sentences and sentences["long_share"] > LONG_SHARE:
        warnings.warn(
            Warnings.W006.format(
                docs=info["docs"], sentences=sentences["count"], share=sentences["long_share"],
                long=LONG_SENTENCE, longest=sentences["longest"],
            )
        )


def sentence_counts(docs: Iterable[Doc]) -> Optional[Dict[str, int]]:
    """The teacher's sentences in docs as counts that add up over shards: sentences,
    their words, the words in sentences over LONG_SENTENCE tokens, the longest; None
    when no doc has sentence boundaries (a teacher with no parser or senter)."""
    lengths = [len(sent) for doc in docs if doc.has_annotation("SENT_START") for sent in doc.sents]
    if not lengths:
        return None
    return {
        "sentences": len(lengths),
        "words": sum(lengths),
        "long_words": sum(n for n in lengths if n > LONG_SENTENCE),
        "longest": max(lengths),
    }


def add_counts(total: Optional[Dict[str, int]], counts: Optional[Dict[str, int]]) -> Optional[Dict[str, int]]:
    """Two sentence_counts together (None where neither has any)."""
    if total is None or counts is None:
        return counts if total is None else total
    return {
        "sentences": total["sentences"] + counts["sentences"],
        "words": total["words"] + counts["words"],
        "long_words": total["long_words"] + counts["long_words"],
        "longest": max(total["longest"], counts["longest"]),
    }


def check_shard_segmentation(counts: Optional[Dict[str, int]], index: int, first: int, examples: int) -> bool:
    """Warn (W008) when most of a shard's words are in the teacher's over-long
    sentences. RETURNS (bool): whether it warned (the pass says it once)."""
    if not counts or counts["long_words"] <= LONG_SHARE * max(1, counts["words"]):
        return False
    warnings.warn(
        Warnings.W008.format(
            shard=index, first=first, last=first + examples - 1, share=counts["long_words"] / counts["words"],
            long=LONG_SENTENCE, longest=counts["longest"], sentences=counts["sentences"], texts=examples,
        )
    )
    return True
