"""Chu-Liu/Edmonds decoding: always a single-rooted tree, and optimal."""
import itertools

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from greenkd_spacy.decoding.mst import decode_batch, find_cycle, is_tree, mst_decode


def tree_score(scores, heads):
    return sum(scores[d, heads[d]] for d in range(1, len(heads)))


def exhaustive_best(scores):
    n = scores.shape[0] - 1
    best, best_heads = -numpy.inf, None
    for assignment in itertools.product(range(n + 1), repeat=n):
        heads = [-1] + list(assignment)
        if is_tree(heads, single_root=True):
            score = tree_score(scores, heads)
            if score > best:
                best, best_heads = score, heads
    return best, best_heads


def square(n):
    return arrays(
        numpy.float64,
        (n + 1, n + 1),
        elements=st.floats(-20, 20, allow_nan=False, allow_infinity=False),
    )


def _check_optimal(scores):
    heads = mst_decode(scores)
    assert is_tree(heads, single_root=True)
    best, _ = exhaustive_best(scores)
    assert tree_score(scores, heads) == pytest.approx(best, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(square))
def test_mst_equals_exhaustive_search(scores):
    _check_optimal(scores)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.just(5).flatmap(square))
def test_mst_equals_exhaustive_search_on_longer_sentences(scores):
    """(n+1)^n head assignments: 5 words take a tenth of a second per example, so in the slow suite."""
    _check_optimal(scores)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60).flatmap(square))
def test_mst_output_is_always_a_single_rooted_tree(scores):
    heads = mst_decode(scores)
    assert heads[0] == -1
    assert is_tree(heads, single_root=True)


def test_mst_handles_forbidden_arcs_and_ties():
    n = 6
    scores = numpy.zeros((n + 1, n + 1))
    heads = mst_decode(scores)
    assert is_tree(heads)
    scores[:, 0] = -numpy.inf  # no root arc is allowed: still a tree
    scores[0, :] = -numpy.inf
    assert is_tree(mst_decode(scores))


def test_mst_breaks_a_cycle():
    # 1 <-> 2 prefer each other; the root prefers 1.
    scores = numpy.full((3, 3), -10.0)
    scores[1, 2] = 5.0
    scores[2, 1] = 5.0
    scores[1, 0] = 1.0
    scores[2, 0] = 0.0
    assert list(mst_decode(scores)) == [-1, 0, 1]


def test_find_cycle():
    assert find_cycle(numpy.array([-1, 0, 1])) is None
    assert sorted(find_cycle(numpy.array([-1, 2, 1]))) == [1, 2]


def test_decode_batch_pads_and_skips_empty():
    rng = numpy.random.default_rng(0)
    arc = rng.normal(size=(3, 4, 5))
    heads = decode_batch(arc, [4, 0, 2])
    assert heads.shape == (3, 4)
    assert (heads[1] == -1).all()
    assert (heads[2, 2:] == -1).all()
    for row, length in zip(heads, [4, 0, 2]):
        if length:
            assert is_tree([-1] + list(row[:length]))


def test_mst_is_fast_enough_on_long_sentences():
    rng = numpy.random.default_rng(1)
    scores = rng.normal(size=(257, 257))
    heads = mst_decode(scores)
    assert is_tree(heads)


@pytest.mark.parametrize("n", [2, 5, 12, 40, 120])
def test_compiled_mst_gives_the_reference_trees(n):
    """The compiled Chu-Liu/Edmonds returns exactly the numpy reference's heads, ties
    included (integer scores make many), on matrices whose greedy heads hold cycles."""
    pytest.importorskip("greenkd_spacy.decoding._mst")
    rng = numpy.random.default_rng(n)
    for trial in range(60):
        scores = rng.normal(size=(n + 1, n + 1)) if trial % 2 else rng.integers(-3, 3, size=(n + 1, n + 1)).astype(float)
        assert mst_decode(scores, compiled=True).tolist() == mst_decode(scores, compiled=False).tolist()


def test_compiled_batch_decoding_gives_the_reference_trees():
    """The whole padded batch decoded in one compiled loop: the reference's heads for
    every sentence (greedy trees, cycles, several root children, ties, forbidden and
    non-finite arcs, empty sentences and padding)."""
    pytest.importorskip("greenkd_spacy.decoding._mst")
    rng = numpy.random.default_rng(7)
    for trial in range(40):
        lengths = rng.integers(0, 30, size=12)
        lengths[0] = 1
        max_len = int(lengths.max())
        if trial % 3 == 0:
            arc = rng.integers(-2, 2, size=(12, max_len, max_len + 1)).astype("float32")
        else:
            arc = rng.normal(size=(12, max_len, max_len + 1)).astype("float32")
        arc[arc > 1.5] = -1e4
        arc[0, 0, 0] = numpy.nan
        if max_len > 2:
            arc[1, 1, :] = -numpy.inf
        compiled = decode_batch(arc, lengths.tolist(), compiled=True)
        reference = decode_batch(arc, lengths.tolist(), compiled=False)
        assert compiled.tolist() == reference.tolist()
