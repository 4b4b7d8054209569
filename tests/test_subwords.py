import pickle

import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

from thinc.api import Model

from greenkd_spacy.models.subwords import (
    add_per_token,
    build_subword_hash_embed,
    subword_embed,
    word_ngram_rows,
)

EMBED = {
    "@architectures": "greenkd.SubwordHashEmbed.v1",
    "width": 32,
    "attrs": ["NORM", "PREFIX", "SUFFIX", "SHAPE"],
    "rows": [500, 100, 250, 250],
    "include_static_vectors": False,
    "subword_rows": 300,
}


def test_a_word_reads_every_marked_ngram_and_the_same_rows_everywhere():
    rows = word_ngram_rows("walk", 1000, 3, 5)
    # "<walk>": 4 trigrams, 3 four-grams, 2 five-grams.
    assert len(rows) == 9 and rows.min() >= 0 and rows.max() < 1000
    assert numpy.array_equal(rows, word_ngram_rows("walk", 1000, 3, 5))
    # "talk" shares "alk", "lk>" and "alk>" with "walk".
    assert len(set(rows.tolist()) & set(word_ngram_rows("talk", 1000, 3, 5).tolist())) >= 3
    # Too short for any n-gram of length >= min_n: the marked word's own row.
    assert len(word_ngram_rows("a", 1000, 4, 5)) == 1


def test_tokens_of_one_word_get_one_vector_and_the_gradient_matches_finite_differences():
    nlp = spacy.blank("en")
    docs = [nlp.make_doc("walk talk walk"), nlp.make_doc("talking")]
    model = subword_embed(4, 50, 3, 4)
    model.initialize(X=docs)
    Ys, backprop = model(docs, is_train=True)
    assert [y.shape for y in Ys] == [(3, 4), (1, 4)]
    assert numpy.allclose(Ys[0][0], Ys[0][2]) and not numpy.allclose(Ys[0][0], Ys[0][1])
    # Loss = sum of every output times a fixed weight; its gradient w.r.t. E by backprop ...
    weights = [numpy.random.RandomState(0).normal(size=y.shape).astype("f") for y in Ys]
    backprop(weights)
    analytic = model.get_grad("E").copy()

    def loss() -> float:
        return float(sum((y * w).sum() for y, w in zip(model.predict(docs), weights)))

    E = model.get_param("E")
    for row, col in [(r, 0) for r in numpy.flatnonzero(numpy.abs(analytic).sum(1))[:5]] + [(0, 1)]:
        E[row, col] += 1e-2
        up = loss()
        E[row, col] -= 2e-2
        down = loss()
        E[row, col] += 1e-2
        assert (up - down) / 2e-2 == pytest.approx(analytic[row, col], abs=1e-3)


def _tagger(embed):
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger", config={"model": {
        "@architectures": "spacy.Tagger.v2",
        "tok2vec": {
            "@architectures": "spacy.Tok2Vec.v2",
            "embed": embed,
            "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": 32, "depth": 1,
                       "window_size": 1, "maxout_pieces": 3},
        },
    }})
    return nlp


def test_a_tagger_over_it_learns_and_round_trips_without_its_cache(tmp_path):
    fix_random_seed(0)
    nlp = _tagger(EMBED)
    train = [
        ("the dogs walked home", ["DT", "NNS", "VBD", "NN"]),
        ("a cat talked loudly", ["DT", "NN", "VBD", "RB"]),
    ]
    examples = [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in train]
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer, drop=0.0)
    texts = [text for text, _ in train] + ["the cats walked"]
    predicted = [[t.tag_ for t in doc] for doc in nlp.pipe(texts)]
    assert predicted[:2] == [tags for _, tags in train]
    # Unseen "cats" shares "cat" and the "-s" ending with what it learned.
    assert predicted[2][1] in ("NN", "NNS")
    tagger_bytes = nlp.get_pipe("tagger").to_bytes(exclude=["vocab"])
    for _ in nlp.pipe(["many more different words that fill the cache"] * 3):
        pass
    assert nlp.get_pipe("tagger").to_bytes(exclude=["vocab"]) == tagger_bytes  # the cache is never saved
    data = nlp.to_bytes()
    nlp.to_disk(tmp_path / "p")
    for loaded in (spacy.load(tmp_path / "p"), _tagger(EMBED).from_bytes(data), pickle.loads(pickle.dumps(nlp))):
        assert [[t.tag_ for t in doc] for doc in loaded.pipe(texts)] == predicted


def test_zero_subword_rows_is_spacys_multihashembed_and_bad_sizes_say_how_to_fix():
    plain = build_subword_hash_embed(32, ["NORM"], [100], False, subword_rows=0)
    assert plain.name != "add_per_token"
    with pytest.raises(ValueError, match=r"E050.*min_n <= max_n.*subword_rows = 0"):
        build_subword_hash_embed(32, ["NORM"], [100], False, subword_rows=10, min_n=5, max_n=3)


def test_a_batch_may_mix_docs_of_two_pipelines_and_empty_docs():
    model = subword_embed(8, 100)
    first, second = spacy.blank("en"), spacy.blank("en")
    docs = [first.make_doc("walking home"), second.make_doc(""), second.make_doc("unseenword here")]
    model.initialize(X=docs)
    Ys, backprop = model(docs, is_train=True)
    assert [y.shape for y in Ys] == [(2, 8), (0, 8), (2, 8)]
    assert backprop([numpy.ones_like(y) for y in Ys]) == []
    assert model.get_grad("E").any()
    assert [y.shape for y in model.predict([second.make_doc("")])] == [(0, 8)]


def _constant(value: float, width: int = 3) -> Model:
    def forward(model, docs, is_train):
        def backprop(dYs):
            model.attrs["seen"] = [dY.copy() for dY in dYs]
            return []
        return [numpy.full((len(doc), width), value, dtype="f") for doc in docs], backprop

    return Model("constant", forward, dims={"nO": width}, attrs={"seen": None})


def test_add_per_token_sums_both_and_sends_each_the_whole_gradient():
    first, second = _constant(1.0), _constant(2.0)
    model = add_per_token(first, second)
    docs = [spacy.blank("en").make_doc("a b"), spacy.blank("en").make_doc("c")]
    Ys, backprop = model(docs, is_train=True)
    assert [y.tolist() for y in Ys] == [[[3.0] * 3] * 2, [[3.0] * 3]]
    dYs = [numpy.full((2, 3), 0.5, "f"), numpy.full((1, 3), -1.0, "f")]
    backprop(dYs)
    for layer in (first, second):
        assert [d.tolist() for d in layer.attrs["seen"]] == [d.tolist() for d in dYs]
    assert model.get_dim("nO") == 3
