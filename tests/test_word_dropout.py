import numpy
import pytest
import spacy
from spacy.lang.en import English
from spacy.ml.models.tok2vec import MultiHashEmbed
from spacy.strings import get_string_id
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, chain, fix_random_seed, set_dropout_rate

from greenkd_spacy.models.word_dropout import UNKNOWN_WORD, build_word_dropout_embed, id_dropout

ATTRS = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
ROWS = [500, 100, 250, 250]


def test_the_architecture_is_registered():
    assert registry.architectures.get("greenkd.WordDropoutEmbed.v1") is build_word_dropout_embed


def test_training_hides_the_word_column_of_about_rate_of_the_tokens_and_nothing_else():
    fix_random_seed(0)
    layer = id_dropout(0.25, column=0)
    X = numpy.arange(40000, dtype="uint64").reshape(10000, 4) + 1
    (Y,), _ = layer([X], is_train=True)
    hidden = Y[:, 0] == get_string_id(UNKNOWN_WORD)
    assert 0.23 < hidden.mean() < 0.27
    assert numpy.array_equal(Y[~hidden, 0], X[~hidden, 0])
    assert numpy.array_equal(Y[:, 1:], X[:, 1:])
    # The input is not changed in place (the feature arrays may be reused).
    assert not (X[:, 0] == get_string_id(UNKNOWN_WORD)).any()
    (Z,), _ = layer([X], is_train=False)
    assert Z is X


def test_hidden_words_share_one_vector_in_training_and_prediction_is_spacys_embedding():
    nlp = spacy.blank("en")
    # Same prefix, suffix and shape; only NORM tells them apart.
    docs = [nlp.make_doc("xaxyz xbxyz")]
    model = build_word_dropout_embed(16, ATTRS, ROWS, False, word_dropout=0.999999)
    model.initialize(X=docs)
    (train_out,), _ = model(docs, is_train=True)
    assert numpy.allclose(train_out[0], train_out[1])
    (predicted,) = model.predict(docs)
    assert not numpy.allclose(predicted[0], predicted[1])
    # Without the dropout layer, the same weights give the same prediction.
    plain = chain(*[layer for layer in model.layers if layer.name != "greenkd_id_dropout"])
    assert numpy.allclose(plain.predict(docs)[0], predicted)


def test_spacys_training_dropout_leaves_the_word_dropout_rate_alone():
    model = build_word_dropout_embed(16, ATTRS, ROWS, False, word_dropout=0.2)
    set_dropout_rate(model, 0.5)
    (layer,) = [node for node in model.walk() if node.name == "greenkd_id_dropout"]
    assert layer.attrs["word_dropout_rate"] == 0.2


def test_zero_rate_is_spacys_multihashembed_with_or_without_vectors():
    for vectors in (False, True):
        model = build_word_dropout_embed(16, ATTRS, ROWS, vectors, word_dropout=0.0)
        reference = MultiHashEmbed(width=16, attrs=ATTRS, rows=ROWS, include_static_vectors=vectors)
        assert model.name == reference.name


def test_norm_may_be_named_in_any_case_or_by_its_id():
    from spacy.attrs import NORM

    for attrs in (["prefix", "norm"], ["PREFIX", NORM]):
        model = build_word_dropout_embed(16, attrs, [100, 100], False, word_dropout=0.2)
        (layer,) = [node for node in model.walk() if node.name == "greenkd_id_dropout"]
        assert layer.attrs["column"] == 1


@pytest.mark.parametrize(
    "attrs,rate,vectors",
    [(["PREFIX", "SUFFIX"], 0.2, False), (ATTRS, 1.0, False), (ATTRS, -0.1, False), (ATTRS, 0.2, True)],
)
def test_bad_settings_say_what_to_set(attrs, rate, vectors):
    with pytest.raises(ValueError, match="word_dropout"):
        build_word_dropout_embed(16, attrs, [100] * len(attrs), vectors, word_dropout=rate)


def test_a_tagger_over_it_learns_and_round_trips():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "tagger",
        config={
            "model": {
                "@architectures": "spacy.Tagger.v2",
                "tok2vec": {
                    "@architectures": "spacy.Tok2Vec.v2",
                    "embed": {
                        "@architectures": "greenkd.WordDropoutEmbed.v1",
                        "width": 32,
                        "attrs": ATTRS,
                        "rows": ROWS,
                        "include_static_vectors": False,
                        "word_dropout": 0.2,
                    },
                    "encode": {
                        "@architectures": "spacy.MaxoutWindowEncoder.v2",
                        "width": 32,
                        "depth": 1,
                        "window_size": 1,
                        "maxout_pieces": 2,
                    },
                },
            }
        },
    )
    data = [("the cat sat", ["D", "N", "V"]), ("a dog ran", ["D", "N", "V"]), ("the dog sat", ["D", "N", "V"])]
    examples = [Example.from_dict(nlp.make_doc(text), {"tags": tags}) for text, tags in data]
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01)
    for _ in range(60):
        nlp.update(examples, sgd=optimizer)
    predicted = [[t.tag_ for t in doc] for doc in nlp.pipe(text for text, _ in data)]
    assert predicted == [tags for _, tags in data]
    restored = English.from_config(nlp.config).from_bytes(nlp.to_bytes())
    again = [[t.tag_ for t in doc] for doc in restored.pipe(text for text, _ in data)]
    assert again == predicted


def test_character_ngrams_stay_visible_when_the_word_is_hidden():
    from greenkd_spacy.models.subwords import build_subword_hash_embed

    nlp = spacy.blank("en")
    docs = [nlp.make_doc("xaxyz xbxyz")]
    hidden = build_subword_hash_embed(16, ATTRS, ROWS, False, subword_rows=200, word_dropout=0.999999)
    hidden.initialize(X=docs)
    (out,), _ = hidden(docs, is_train=True)
    # NORM is hidden for both, but their n-grams ("xax", "xbx", ...) still tell them apart.
    assert not numpy.allclose(out[0], out[1])
    assert [n for n in hidden.walk() if n.name == "greenkd_id_dropout"]
    plain = build_subword_hash_embed(16, ATTRS, ROWS, False, subword_rows=200)
    assert not [n for n in plain.walk() if n.name == "greenkd_id_dropout"]
