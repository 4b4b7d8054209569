"""greenkd.NgramCNN.v1: the linear bag plus a convolution over the doc's word embeddings."""
import numpy
import pytest
import spacy
from spacy.training import Example
from thinc.api import Adam

from greenkd_spacy.models.dan import dan_module, word_sequence
from greenkd_spacy.models.ngrams import NgramTable
from greenkd_spacy.models.pytorch.word_cnn import FIRST_WORD_ROW, GAP_ROW, UNKNOWN_ROW

from .util import textcat_examples, trained_textcat


def cnn_nlp(steps=40, **settings):
    """A small NgramCNN trained on the toy sentiment data."""
    model = {"@architectures": "greenkd.NgramCNN.v1", "max_ngrams": 500, "word_width": 8, "conv_width": 16, **settings}
    return trained_textcat("greenkd_textcat", {"model": model}, steps)


def logits(nlp, texts):
    pipe = nlp.get_pipe("greenkd_textcat")
    return numpy.asarray(pipe.model.predict([nlp.make_doc(t) for t in texts]))


def test_word_sequence_puts_gaps_between_docs_and_finds_words_by_their_unigram():
    nlp = spacy.blank("en")
    table = NgramTable(["great", "a great", "film"], ngram_range=(1, 2))
    docs = [nlp.make_doc("A great film"), nlp.make_doc(""), nlp.make_doc("unseen")]
    sequence, positions, doc_of = word_sequence(table, docs, window=2)
    great, film = FIRST_WORD_ROW, FIRST_WORD_ROW + 1  # "a great" is no word
    assert sequence.tolist() == [GAP_ROW] * 2 + [UNKNOWN_ROW, great, film] + [GAP_ROW] * 4 + [UNKNOWN_ROW] + [GAP_ROW] * 2
    # Each word's convolution output is the window centred on it.
    assert (sequence[positions + 2] != GAP_ROW).all()
    assert doc_of.tolist() == [0, 0, 0, 2]


def test_the_convolution_sees_word_order_the_bag_does_not():
    """With unigrams only, the linear bag scores a doc and its reversal alike; the CNN
    model does not (the same words, read in another order)."""
    cnn = cnn_nlp(ngram_size=1)
    assert not numpy.allclose(*logits(cnn, ["awful film , great", "great , film awful"]))
    spacy.util.fix_random_seed(0)
    bag = spacy.blank("en")
    bag.add_pipe("greenkd_textcat", config={"model": {"@architectures": "greenkd.NgramLinear.v1", "ngram_size": 1}})
    egs = textcat_examples(bag)
    bag.initialize(lambda: egs)
    for _ in range(10):
        bag.update(egs)
    assert numpy.allclose(*logits(bag, ["awful film , great", "great , film awful"]), atol=1e-6)


def test_a_docs_scores_do_not_depend_on_the_other_docs_of_its_batch():
    nlp = cnn_nlp(window=2)
    alone = logits(nlp, ["a great film"])[0]
    assert logits(nlp, ["awful and boring", "a great film", ""])[1] == pytest.approx(alone, abs=1e-5)
    assert logits(nlp, ["a great film", "terrible movie , awful"])[0] == pytest.approx(alone, abs=1e-5)


def test_inference_reads_precomputed_responses_that_follow_the_weights():
    """At inference the convolution sums per-word responses looked up from a table; the
    scores are those of the product at each position, also after an update changes the
    weights the table was made from."""
    import torch

    nlp = cnn_nlp(window=2)
    pipe = nlp.get_pipe("greenkd_textcat")
    cnn = dan_module(pipe.model).cnn
    texts = ["a great film", "awful and boring", "", "i loved it , wonderful but dull"]
    words = word_sequence(pipe.model.attrs["ngrams"], [nlp.make_doc(t) for t in texts], window=2)
    sequence, positions, doc_of = (torch.as_tensor(a, dtype=torch.long) for a in words)

    def both():
        cnn.eval()
        with torch.no_grad():
            looked_up = cnn(sequence, positions, doc_of, n_docs=len(texts))
            cnn.train()  # dropout 0: the product at each position, as in training
            computed = cnn(sequence, positions, doc_of, n_docs=len(texts))
        return looked_up, computed

    looked_up, computed = both()
    assert cnn._responses is not None and torch.allclose(looked_up, computed, atol=1e-5)
    table = cnn._responses
    nlp.update(textcat_examples(nlp)[:2], sgd=Adam(0.05))
    looked_up_after, computed_after = both()
    assert cnn._responses is not table and torch.allclose(looked_up_after, computed_after, atol=1e-5)
    assert not torch.allclose(looked_up_after, looked_up)


def test_learns_round_trips_averages_and_prunes(tmp_path):
    nlp = cnn_nlp()
    pipe = nlp.get_pipe("greenkd_textcat")
    assert nlp("a great film").cats["pos"] > 0.8 and nlp("boring and awful").cats["neg"] > 0.8
    module = dan_module(pipe.model)
    # SparseAdam updates the word table with the n-gram tables; its gap row stays zero.
    assert module.sparse_parameters()[-1] is module.cnn.embed.weight
    assert not module.cnn.embed.weight[GAP_ROW].any()
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert loaded("a great film").cats == pytest.approx(nlp("a great film").cats)
    optimizer = Adam(0.01, use_averages=True)
    for _ in range(3):
        nlp.update([Example.from_dict(nlp.make_doc("a great film"), {"cats": {"pos": 1.0, "neg": 0.0}})], sgd=optimizer)
    assert len(pipe._averages) == 2
    # Pruning keeps the kept words' embeddings: a doc of one kept word scores the same.
    table = pipe.model.attrs["ngrams"]
    kept = table.select(10)
    word = next(table.ngrams[row] for row in kept if " " not in table.ngrams[row])
    before = logits(nlp, [word])
    pipe.prune_ngrams(10)
    assert dan_module(pipe.model).cnn.n_words == sum(" " not in table.ngrams[row] for row in kept)
    assert logits(nlp, [word]) == pytest.approx(before, abs=1e-5)


def test_bad_sizes_say_which_setting_to_fix():
    with pytest.raises(ValueError, match="conv_width"):
        cnn_nlp(conv_width=0)


def test_words_from_vectors_start_words_of_one_use_together():
    """Seeded from the pipeline's vectors, words with near vectors start near each other
    (their principal components), far from words of the other kind; a word without a
    vector keeps its random row."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    good, bad = rng.normal(size=16).astype("float32"), rng.normal(size=16).astype("float32")
    for word in ("great", "loved", "wonderful"):
        nlp.vocab.set_vector(word, good + 0.01 * rng.normal(size=16).astype("float32"))
    for word in ("terrible", "awful", "hated"):
        nlp.vocab.set_vector(word, bad + 0.01 * rng.normal(size=16).astype("float32"))
    model = {"@architectures": "greenkd.NgramCNN.v1", "max_ngrams": 500, "word_width": 4, "conv_width": 8,
             "words_from_vectors": True}
    pipe = nlp.add_pipe("greenkd_textcat", config={"model": model})
    egs = textcat_examples(nlp)
    nlp.initialize(lambda: egs)
    table, embed = pipe.model.attrs["ngrams"], dan_module(pipe.model).cnn.embed.weight.detach().numpy()

    def row(word):
        return embed[table.word_rows()[table.index[word]]]

    near = numpy.linalg.norm(row("great") - row("loved"))
    far = numpy.linalg.norm(row("great") - row("awful"))
    assert near < 0.1 * far
    assert numpy.linalg.norm(row("movie") - row("film")) > near  # no vectors: random rows


def test_words_from_vectors_without_vectors_says_how_to_load_them():
    nlp = spacy.blank("en")
    model = {"@architectures": "greenkd.NgramCNN.v1", "max_ngrams": 500, "words_from_vectors": True}
    nlp.add_pipe("greenkd_textcat", config={"model": model})
    egs = textcat_examples(nlp)
    with pytest.raises(ValueError, match=r"words_from_vectors = true.*\[initialize\] vectors"):
        nlp.initialize(lambda: egs)
