"""benchmarks/paired_bootstrap.py: how sure a LAS difference on a small test set is."""
import numpy
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from benchmarks import paired_bootstrap


def test_sentence_counts_score_as_spacys_parser_scorer():
    """Punctuation arcs left out, labels compared lowercased, a wrong head or label is no hit."""
    nlp = spacy.blank("en")
    words = ["She", "eats", "fish", "."]
    gold = Doc(nlp.vocab, words=words, heads=[1, 1, 1, 1], deps=["nsubj", "ROOT", "obj", "punct"])
    pred = Doc(nlp.vocab, words=words, heads=[1, 1, 0, 2], deps=["NSUBJ", "ROOT", "obj", "obj"])
    right, n_pred, n_gold = paired_bootstrap.sentence_counts(Example(pred, gold))
    # gold: 3 scored arcs (punct left out); predicted: 4 (its "." is labelled obj)
    assert (right, n_pred, n_gold) == (2, 4, 3)
    from spacy.scorer import Scorer

    getter = lambda token, attr: token.vocab.strings.as_string(getattr(token, attr)).lower()  # noqa: E731
    scores = Scorer.score_deps([Example(pred, gold)], "dep", getter=getter, head_attr="head", ignore_labels=("p", "punct"))
    assert abs(paired_bootstrap.las(numpy.array([right, n_pred, n_gold])) - 100 * scores["dep_las"]) < 1e-6


def test_bootstrap_of_equal_and_of_uniformly_better_parsers():
    rng = numpy.random.default_rng(1)
    n = 50
    gold = rng.integers(5, 30, size=n)
    a = numpy.stack([gold // 2, gold, gold], axis=1)
    same = paired_bootstrap.bootstrap([(a, a.copy())], samples=500, seed=0)
    assert same["per_pair"][0]["b_minus_a"] == 0.0
    assert same["per_pair"][0]["interval_95"] == [0.0, 0.0]
    assert same["per_pair"][0]["share_a_at_least_b"] == 1.0
    better = a.copy()
    better[:, 0] += 1  # one more arc right in every sentence
    result = paired_bootstrap.bootstrap([(a, better), (a, a.copy())], samples=500, seed=0)
    first = result["per_pair"][0]
    assert first["b_minus_a"] > 0 and first["interval_95"][0] > 0 and first["share_a_at_least_b"] == 0.0
    # the mean over the two pairs is half the first pair's difference
    assert abs(result["mean_over_pairs"]["b_minus_a"] - first["b_minus_a"] / 2) < 0.011
