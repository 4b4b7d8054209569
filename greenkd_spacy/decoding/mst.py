"""Chu-Liu/Edmonds maximum spanning tree decoding for graph-based parsers.

Scores are given as a square matrix ``scores[dep, head]`` over ``n + 1`` nodes, where
node 0 is the artificial root and nodes ``1..n`` are the tokens of one sentence. The
decoder returns ``heads`` with ``heads[0] == -1`` and, for every token, the index of its
head, such that the arcs form a tree rooted at node 0 with exactly one child of the root.
"""
from typing import List, Optional, Sequence

import numpy

try:  # The compiled Chu-Liu/Edmonds (setup.py builds it); this module's is the reference.
    from ._mst import chu_liu_edmonds as _compiled_chu_liu_edmonds
    from ._mst import decode_padded as _compiled_decode_padded
except ImportError:  # pragma: no cover - a source checkout that was not built
    _compiled_chu_liu_edmonds = None
    _compiled_decode_padded = None

# Scores at or below this value are treated as forbidden arcs.
NEG_INF = -1e30


def find_cycle(heads: numpy.ndarray) -> Optional[List[int]]:
    """Find one cycle in a head assignment.

    heads (numpy.ndarray): heads[i] is the head of node i; heads[0] is ignored.
    RETURNS (Optional[List[int]]): The nodes of a cycle, or None if there is none.
    """
    n = heads.shape[0]
    # 0: unvisited, 1: on the current path, 2: finished
    state = numpy.zeros(n, dtype=numpy.int8)
    state[0] = 2
    for start in range(1, n):
        if state[start]:
            continue
        path = []
        node = start
        while state[node] == 0:
            state[node] = 1
            path.append(node)
            node = int(heads[node])
        if state[node] == 1:
            return path[path.index(node):]
        for visited in path:
            state[visited] = 2
    return None


def is_tree(heads: Sequence[int], single_root: bool = True) -> bool:
    """Check that heads describe a tree rooted at node 0.

    heads (Sequence[int]): heads[i] is the head of node i (heads[0] is ignored).
    single_root (bool): Also require exactly one child of the root.
    RETURNS (bool): Whether the structure is a well-formed tree.
    """
    heads_arr = numpy.asarray(heads, dtype=numpy.int64)
    n = heads_arr.shape[0]
    if n <= 1:
        return True
    body = heads_arr[1:]
    if body.min() < 0 or body.max() >= n or numpy.any(body == numpy.arange(1, n)):
        return False
    if single_root and int((body == 0).sum()) != 1:
        return False
    return find_cycle(heads_arr) is None


def _chu_liu_edmonds(scores: numpy.ndarray) -> numpy.ndarray:
    """Unconstrained maximum spanning arborescence (root may have several children)."""
    n = scores.shape[0]
    heads = scores.argmax(axis=1)
    heads[0] = -1
    cycle = find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = numpy.zeros(n, dtype=bool)
    in_cycle[cycle] = True
    cyc = numpy.flatnonzero(in_cycle)
    rest = numpy.flatnonzero(~in_cycle)  # rest[0] == 0, the root is never in a cycle
    cycle_arc_scores = scores[cyc, heads[cyc]]
    # Contract the cycle into one node c. An arc h -> c is worth the best way of
    # breaking the cycle at one of its nodes; an arc c -> d is the best cycle head for d.
    gain = scores[numpy.ix_(cyc, rest)] - cycle_arc_scores[:, None]
    enter_dep = gain.argmax(axis=0)
    enter_score = gain.max(axis=0) + cycle_arc_scores.sum()
    leave = scores[numpy.ix_(rest, cyc)]
    leave_head = leave.argmax(axis=1)
    m = rest.shape[0]
    contracted = numpy.full((m + 1, m + 1), NEG_INF)
    contracted[:m, :m] = scores[numpy.ix_(rest, rest)]
    contracted[:m, m] = leave.max(axis=1)
    contracted[m, :m] = enter_score
    contracted[0, :] = NEG_INF
    numpy.fill_diagonal(contracted, NEG_INF)
    sub_heads = _chu_liu_edmonds(contracted)
    result = heads.copy()
    for i in range(1, m):
        head = sub_heads[i]
        result[rest[i]] = cyc[leave_head[i]] if head == m else rest[head]
    entry = sub_heads[m]
    result[cyc[enter_dep[entry]]] = rest[entry]
    return result


def mst_decode(scores: numpy.ndarray, compiled: bool = True) -> numpy.ndarray:
    """Decode the best single-rooted dependency tree.

    scores (numpy.ndarray): Float array of shape (n + 1, n + 1), scores[dep, head];
        row 0 (the root's own head) and the diagonal are ignored. Log-probabilities or
        unnormalised logits both work: a per-dependent constant does not change the tree.
    compiled (bool): Use the compiled Chu-Liu/Edmonds where it is built (the same
        trees; False runs this module's, the reference the tests compare it with).
    RETURNS (numpy.ndarray): Int array heads of shape (n + 1,), heads[0] == -1.
    """
    n = scores.shape[0] - 1
    if n <= 0:
        return numpy.full((scores.shape[0],), -1, dtype=numpy.int64)
    work = numpy.array(scores, dtype=numpy.float64)
    work[~numpy.isfinite(work)] = NEG_INF
    numpy.maximum(work, NEG_INF, out=work)
    numpy.fill_diagonal(work, NEG_INF)
    work[0, :] = NEG_INF
    greedy = work.argmax(axis=1)
    greedy[0] = -1
    # The per-token argmax is an upper bound on every tree's score, so when it already is
    # a single-rooted tree it is the answer; trained models get here for most sentences.
    if int((greedy[1:] == 0).sum()) == 1 and find_cycle(greedy) is None:
        return greedy.astype(numpy.int64)
    # Single root: every tree uses at least one root arc, so lowering all root arcs by a
    # constant larger than any score difference makes the best tree use exactly one of
    # them, and among those trees the order is unchanged (all pay the constant once).
    allowed = work > NEG_INF / 2
    finite = work[allowed]
    spread = float(finite.max() - finite.min()) if finite.size else 0.0
    penalty = (spread + 1.0) * (n + 1)
    work[1:, 0] = numpy.where(allowed[1:, 0], work[1:, 0] - penalty, NEG_INF)
    if compiled and _compiled_chu_liu_edmonds is not None:
        heads = _compiled_chu_liu_edmonds(numpy.ascontiguousarray(work))
    else:
        heads = _chu_liu_edmonds(work)
    heads[0] = -1
    return heads.astype(numpy.int64)


def decode_batch(
    arc_scores: numpy.ndarray, lengths: Sequence[int], compiled: bool = True
) -> numpy.ndarray:
    """Decode a padded batch of sentences.

    arc_scores (numpy.ndarray): Shape (S, L, L + 1): for sentence s, token i (0-based)
        and candidate head j (0 = root, j = token j - 1).
    lengths (Sequence[int]): The number of real tokens of each sentence.
    compiled (bool): Decode the whole batch in the compiled loop where it is built (the
        same trees; False runs mst_decode per sentence, the reference).
    RETURNS (numpy.ndarray): Int array (S, L) of heads in 0..L (0 = root), -1 on padding.
    """
    if compiled and _compiled_decode_padded is not None:
        return _compiled_decode_padded(
            numpy.ascontiguousarray(arc_scores, dtype=numpy.float64),
            numpy.asarray(lengths, dtype=numpy.int64).reshape(-1),
        )
    n_sents, max_len = arc_scores.shape[0], arc_scores.shape[1]
    heads = numpy.full((n_sents, max_len), -1, dtype=numpy.int64)
    for s, length in enumerate(lengths):
        if length == 0:
            continue
        square = numpy.empty((length + 1, length + 1), dtype=numpy.float64)
        square[0] = NEG_INF
        square[1:] = arc_scores[s, :length, : length + 1]
        heads[s, :length] = mst_decode(square, compiled=compiled)[1:]
    return heads
