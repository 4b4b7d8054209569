"""Bad configs, mismatches and unsafe files: clear errors before any training
starts, and saved models that load without unpickling arbitrary objects."""
import io
import pickle
from pathlib import Path

import pytest
import spacy
import torch
from typer.testing import CliRunner

from greenkd_spacy.cli.app import app
from greenkd_spacy.models.torch_bridge import load_weights_only
from greenkd_spacy.distillation.loop import distill

from ..test_distill import student_config
from ..util import save_tiny_source

COMPONENTS = ["greenkd_parser", "greenkd_textcat", "greenkd_ner", "greenkd_chunker"]


def listener_student(teacher_dir, tmp_path, listener_width):
    """A student whose parser listens to a 32-wide spaCy tok2vec."""
    config = student_config(teacher_dir, tmp_path)
    config["nlp"]["pipeline"] = ["tok2vec", "greenkd_parser"]
    config["components"]["tok2vec"] = {
        "factory": "tok2vec",
        "model": {
            "@architectures": "spacy.HashEmbedCNN.v2", "width": 32, "depth": 1, "embed_size": 200,
            "window_size": 1, "maxout_pieces": 2, "subword_features": True, "pretrained_vectors": None,
        },
    }
    config["components"]["greenkd_parser"]["model"]["tok2vec"] = {
        "@architectures": "spacy.Tok2VecListener.v1", "width": listener_width, "upstream": "*",
    }
    config["distillation"]["max_steps"] = 2
    return config


def test_encoder_width_that_does_not_fit_the_head_fails_before_the_teacher_pass(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    with pytest.raises(ValueError, match=r"E002.*width 32.*built for width 16"):
        distill(teacher, listener_student(teacher_dir, tmp_path, 16), tmp_path / "out")
    assert not (tmp_path / "cache").exists(), "the teacher ran before the student was checked"
    assert not (tmp_path / "out" / "model-last").exists()
    # The fix the error names works.
    _, summary = distill(teacher, listener_student(teacher_dir, tmp_path, 32), tmp_path / "out")
    assert summary["training"]["steps"] == 2


def test_cli_reports_missing_teacher_and_component(teacher_dir, tmp_path):
    config_path = tmp_path / "student.cfg"
    student_config(teacher_dir, tmp_path).to_disk(config_path)
    runner = CliRunner()
    result = runner.invoke(app, ["distill", str(tmp_path / "nowhere"), str(config_path), str(tmp_path / "out")])
    assert result.exit_code == 1 and "E014" in result.output and "train it first" in " ".join(result.output.split())
    student_config(teacher_dir, tmp_path, student_to_teacher={"greenkd_parser": "parser"}).to_disk(config_path)
    result = runner.invoke(app, ["distill", str(teacher_dir / "model"), str(config_path), str(tmp_path / "out")])
    assert result.exit_code == 1 and "E015" in result.output and "student_to_teacher" in result.output
    assert not (tmp_path / "out" / "model-last").exists()


def test_unknown_distillation_setting_is_named(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    with pytest.raises(ValueError, match=r"Unknown setting\(s\) \['max_step'\]"):
        distill(teacher, student_config(teacher_dir, tmp_path, max_step=10), tmp_path / "out")


@pytest.mark.parametrize(
    "setting,value",
    [("temperature", 0.0), ("eval_frequency", "often"), ("shard_size", 0), ("dropout", 1.5), ("student_to_teacher", ["parser"])],
)
def test_distillation_section_is_validated_by_its_schema(teacher_dir, tmp_path, setting, value):
    """As spaCy validates [training]: a wrong type or an out-of-range value is named
    before anything runs."""
    from thinc.api import ConfigValidationError

    teacher = spacy.load(teacher_dir / "model")
    with pytest.raises(ConfigValidationError, match=setting):
        distill(teacher, student_config(teacher_dir, tmp_path, **{setting: value}), tmp_path / "out")
    assert not (tmp_path / "cache").exists()  # no teacher pass


class Payload:
    """Unpickling this runs code: what a tampered model file would do."""

    def __reduce__(self):
        return (Path.touch, (Path("/tmp/greenkd-unpickled"),))


def test_weights_load_without_unpickling_objects():
    module = torch.nn.Linear(2, 2)
    buffer = io.BytesIO()
    torch.save(module.state_dict(), buffer)
    load_weights_only(torch.nn.Linear(2, 2), buffer.getvalue(), torch.device("cpu"))
    tampered = io.BytesIO()
    torch.save({"weight": Payload()}, tampered)
    with pytest.raises(pickle.UnpicklingError):
        load_weights_only(torch.nn.Linear(2, 2), tampered.getvalue(), torch.device("cpu"))
    assert not Path("/tmp/greenkd-unpickled").exists()


@pytest.mark.parametrize("component", COMPONENTS)
def test_saved_components_load_with_weights_only(component, tmp_path, monkeypatch):
    save_tiny_source(tmp_path / "model", component)
    calls = []
    original = torch.load

    def checked_load(*args, **kwargs):
        calls.append(kwargs.get("weights_only"))
        return original(*args, **kwargs)

    monkeypatch.setattr(torch, "load", checked_load)
    nlp = spacy.load(tmp_path / "model")
    nlp("A short test .")
    assert calls and all(flag is True for flag in calls), calls


def test_teacher_component_of_another_kind_fails_before_the_teacher_pass(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    teacher.add_pipe("sentencizer", name="not_a_parser")
    config = student_config(teacher_dir, tmp_path, student_to_teacher={"greenkd_parser": "not_a_parser"})
    with pytest.raises(ValueError, match=r"E010.*not_a_parser"):
        distill(teacher, config, tmp_path / "out")
    assert not (tmp_path / "cache").exists()


def test_changed_teacher_gets_a_new_cache(teacher_dir, tmp_path):
    teacher = spacy.load(teacher_dir / "model")
    config = student_config(teacher_dir, tmp_path, max_steps=1)
    distill(teacher, config, tmp_path / "a")
    # Same teacher again: the cache is reused.
    _, summary = distill(teacher, config, tmp_path / "b")
    assert summary["annotation"]["greenkd_parser"]["reused"] is True
    # Changed weights: a second cache directory, the teacher runs again.
    module = teacher.get_pipe("greenkd_parser").model
    for node in module.walk():
        for name in node.param_names:
            if node.has_param(name):
                node.set_param(name, node.get_param(name) * 1.01)
    for shim in (s for node in module.walk() for s in node.shims):
        for tensor in shim._model.parameters():
            tensor.data.mul_(1.01)
    _, summary = distill(teacher, config, tmp_path / "c")
    assert "reused" not in summary["annotation"]["greenkd_parser"]
    assert len([p for p in (tmp_path / "cache").iterdir() if p.is_dir()]) == 2
