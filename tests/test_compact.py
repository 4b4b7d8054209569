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
    record = srsly.read_json(tmp_path / "compact.json")
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


@pytest.mark.parametrize("component", ["greenkd_ner", "greenkd_textcat"])
def test_every_kind_loads_back_as_float32_from_disk_and_from_bytes(tmp_path, component):
    from greenkd_spacy.models.storage import _compacted

    from .util import save_tiny_source

    save_tiny_source(tmp_path / "model", component)
    nlp = spacy.load(tmp_path / "model")
    texts = ["John lives here", "good", "the cat"]
    def outputs(pipeline):
        docs = list(pipeline.pipe(texts))
        return [[(e.text, e.label_) for e in doc.ents] for doc in docs], [doc.cats for doc in docs]

    ents, cats = outputs(nlp)
    assert set(save_compacted(nlp, tmp_path / "small")) == {component}
    loaded = spacy.load(tmp_path / "small")
    assert _dtypes(loaded.get_pipe(component)) == {"float32"}
    loaded_ents, loaded_cats = outputs(loaded)
    assert loaded_ents == ents
    assert all(new == pytest.approx(old, abs=1e-2) for new, old in zip(loaded_cats, cats))
    # from_bytes: the component's bytes written compacted load back as float32 too.
    with _compacted(nlp, "float16"):
        data = nlp.get_pipe(component).to_bytes()
    fresh = spacy.load(tmp_path / "model")
    fresh.get_pipe(component).from_bytes(data)
    assert _dtypes(fresh.get_pipe(component)) == {"float32"}
    assert disk_bytes(tmp_path / "small") < disk_bytes(tmp_path / "model")


def test_a_tok2vec_running_our_bilstm_keeps_its_tables_and_compacts_its_lstm(tmp_path):
    """spaCy's tok2vec component loads thinc parameters as stored: its hashed tables
    stay float32 on disk; the PyTorch BiLSTM inside it is written as float16."""
    import io

    from .util import SMALL_ENCODER

    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": dict(SMALL_ENCODER, pos_width=0)})
    nlp.initialize()
    counts = save_compacted(nlp, tmp_path / "small")
    assert counts == {"tok2vec": 1}
    msg = srsly.msgpack_loads((tmp_path / "small" / "tok2vec" / "model").read_bytes())
    tables = [value for node in msg["params"] for value in node.values() if value is not None]
    assert tables and all(value.dtype == numpy.float32 for value in tables)
    (state_bytes,) = [srsly.msgpack_loads(b)["state"] for shims in msg["shims"] for b in shims]
    assert {t.dtype for t in torch.load(io.BytesIO(state_bytes), weights_only=True).values()} == {torch.float16}
    assert _dtypes(spacy.load(tmp_path / "small").get_pipe("tok2vec")) == {"float32"}


def test_a_failed_write_leaves_the_pipeline_as_it_was(tmp_path, monkeypatch):
    save_trained_parser(tmp_path, "train.spacy")
    nlp = spacy.load(tmp_path / "model")
    before = _parse(nlp)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(nlp, "to_disk", broken)
    with pytest.raises(ValueError, match=r"(?s)Could not write .*small.*disk full"):
        save_compacted(nlp, tmp_path / "small")
    assert not (tmp_path / "small").exists() and not (tmp_path / ".small.tmp").exists()
    assert _dtypes(nlp.get_pipe("greenkd_parser")) == {"float32"}
    for node in nlp.get_pipe("greenkd_parser").model.walk():
        for shim in node.shims:
            assert not hasattr(shim._model, "greenkd_storage_dtype")
    assert _parse(nlp) == before


def test_compact_output_must_be_new(tmp_path):
    save_trained_parser(tmp_path, "train.spacy")
    runner = CliRunner()
    inside = runner.invoke(app, ["compact", str(tmp_path / "model"), str(tmp_path / "model" / "small")])
    assert inside.exit_code == 1 and "inside it" in inside.output
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "stale.txt").write_text("x")
    taken = runner.invoke(app, ["compact", str(tmp_path / "model"), str(tmp_path / "taken"), "--overwrite"])
    assert taken.exit_code == 1 and "not an empty directory" in taken.output
    first = runner.invoke(app, ["compact", str(tmp_path / "model"), str(tmp_path / "small")])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["compact", str(tmp_path / "model"), str(tmp_path / "small"), "--overwrite"])
    assert again.exit_code == 0, again.output
    dtype = runner.invoke(app, ["compact", str(tmp_path / "model"), str(tmp_path / "x"), "--dtype", "int8"])
    assert dtype.exit_code == 1 and "not supported" in dtype.output


def test_a_study_row_of_a_compaction(tmp_path):
    """benchmarks/bench.py compact: the record as a results row named by the input (the
    row of the same input replaced), with no test set scored on."""
    from benchmarks.bench import main as bench_row

    save_trained_parser(tmp_path, "train.spacy")
    out = tmp_path / "compact.json"
    for _ in range(2):
        bench_row(["compact", str(tmp_path / "model"), str(tmp_path / "small"), "--overwrite", "-o", str(out)])
    (row,) = srsly.read_json(out)
    assert row["system"] == str(tmp_path / "model") and row["data"] is None
    assert row["disk_bytes_after"] < row["disk_bytes_before"] and row["cores"] >= 1
