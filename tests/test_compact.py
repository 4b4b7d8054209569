"""spacy greenkd-compact: greenkd's weights stored as float16 take about half the
space, load back as float32, parse the same and can be trained on; the pipeline in
memory is untouched; spaCy-only pipelines are refused."""
import numpy
import pytest
import spacy
import srsly
import torch
from spacy.tokens import Doc
from typer.testing import CliRunner

from greenkd_spacy.bench import disk_bytes
from greenkd_spacy.cli.app import app
from greenkd_spacy.models.storage import save_compacted

from .util import SENTENCES, make_examples, save_trained_parser


def _parse(nlp):
    docs = [nlp(Doc(nlp.vocab, words=words, pos=pos)) for words, _, _, pos in SENTENCES]
    return [[(t.head.i, t.dep_) for t in doc] for doc in docs]


def _dtypes(proc):
    """The dtypes of a component's thinc parameters and PyTorch tensors."""
    found = set()
    for node in proc.model.walk():
        found |= {str(node.get_param(p).dtype) for p in node.param_names if node.has_param(p)}
        for shim in node.shims:
            found |= {str(t.dtype).replace("torch.", "") for t in shim._model.state_dict().values()}
    return found


def test_compacted_parser_is_half_the_size_and_parses_the_same(tmp_path):
    save_trained_parser(tmp_path, "train.spacy")
    result = CliRunner().invoke(app, [
        "compact", str(tmp_path / "model"), str(tmp_path / "small"),
        "--data", str(tmp_path / "train.spacy"), "--output", str(tmp_path / "compact.json"),
    ])
    assert result.exit_code == 0, result.output
    assert "greenkd_parser" in result.output and "dep_las" in result.output
    (record,) = srsly.read_json(tmp_path / "compact.json")
    assert record["scores_after"]["dep_las"] == record["scores_before"]["dep_las"]
    full = disk_bytes(tmp_path / "model" / "greenkd_parser")
    small = disk_bytes(tmp_path / "small" / "greenkd_parser")
    assert small < 0.6 * full and record["disk_bytes_after"] < record["disk_bytes_before"]
    original, compacted = spacy.load(tmp_path / "model"), spacy.load(tmp_path / "small")
    assert _parse(compacted) == _parse(original)
    assert _dtypes(compacted.get_pipe("greenkd_parser")) == {"float32"}
    # It can be trained on, and saving it again writes full precision.
    optimizer = compacted.resume_training()
    losses = compacted.update(make_examples(compacted), sgd=optimizer)
    assert numpy.isfinite(losses["greenkd_parser"])
    compacted.to_disk(tmp_path / "again")
    assert disk_bytes(tmp_path / "again" / "greenkd_parser") > 0.9 * full


def test_the_pipeline_in_memory_keeps_its_precision(tmp_path):
    save_trained_parser(tmp_path, "train.spacy")
    nlp = spacy.load(tmp_path / "model")
    before = _parse(nlp)
    assert set(save_compacted(nlp, tmp_path / "small")) == {"greenkd_parser"}
    assert _dtypes(nlp.get_pipe("greenkd_parser")) == {"float32"}
    assert _parse(nlp) == before
    nlp.to_disk(tmp_path / "full")
    assert disk_bytes(tmp_path / "full") > disk_bytes(tmp_path / "small")


def test_compact_refuses_what_it_cannot_do(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    assert save_compacted(nlp, tmp_path / "nothing") == {}
    assert not (tmp_path / "nothing").exists()
    with pytest.raises(ValueError, match="Unknown storage dtype 'int8'"):
        save_compacted(nlp, tmp_path / "x", "int8")
    nlp.to_disk(tmp_path / "plain")
    runner = CliRunner()
    result = runner.invoke(app, ["compact", str(tmp_path / "plain"), str(tmp_path / "out")])
    assert result.exit_code == 1 and "no greenkd weights" in result.output
    result = runner.invoke(app, ["compact", str(tmp_path / "plain"), str(tmp_path / "plain")])
    assert result.exit_code == 1 and "elsewhere" in result.output
