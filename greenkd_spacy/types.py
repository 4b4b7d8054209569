"""Type aliases and the small records passed between the parser's model and pipe."""
from typing import List, NamedTuple, Optional, Tuple

from spacy.tokens import Doc
from thinc.types import Floats3d, Ints1d, Ints2d

# (doc index in the batch, first token, end token): one tree is built per segment.
Segment = Tuple[int, int, int]


class ParserInput(NamedTuple):
    """What the biaffine model reads.

    heads, when given, are the heads at which labels are scored, padded to (S, L) with
    values in 0..L (0 = root, j = j-th token of the segment) and -1 on padding.
    arc_scores=False asks for the trees and labels only: the padded (S, L, L + 1) arc
    scores, hundreds of MB for a batch with one long sentence, are not assembled and
    ParserScores.arc_logits comes back empty, (0, 0, 1).
    """

    docs: List[Doc]
    segments: List[Segment]
    heads: Optional[Ints2d] = None
    arc_scores: bool = True


class ParserScores(NamedTuple):
    """What the biaffine model returns, one row per segment, padded to L tokens."""

    arc_logits: Floats3d  # (S, L, L + 1) over candidate heads, 0 = root
    label_logits: Floats3d  # (S, L, n_labels) at the heads below
    heads: Ints2d  # (S, L): given heads, or the decoded trees at inference
    lengths: Ints1d  # (S,)
    segments: List[Segment]  # what each row is


class ParserTargets(NamedTuple):
    """A teacher's distributions for the same padded segments a student scores."""

    arc_logprobs: Floats3d  # (S, L, L + 1); very negative where the teacher gives no mass
    label_logprobs: Floats3d  # (S, L, n_labels) at label_heads
    label_heads: Ints2d  # (S, L): the gold head where known, else the teacher's own
