"""greenkd.train_budget.v1 ends `spacy train` after a wall-clock budget the way any run
ends (model-last saved, model-best kept, exit status 0), and benchmarks/timed.py records
the steps and the budget beside the run's cost."""
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly
from spacy.cli.init_config import init_config
from spacy.tokens import DocBin

from benchmarks.rows import add_train_cost
from greenkd_spacy.training.budget import create_train_budget

ROOT = Path(__file__).parent.parent


def _tagger_setup(tmp_path: Path) -> Path:
    nlp = spacy.blank("en")
    db = DocBin()
    for i in range(40):
        doc = nlp(f"the cat {i} sat on mats")
        for token, tag in zip(doc, ["D", "N", "C", "V", "P", "N"]):
            token.tag_ = tag
        db.add(doc)
    db.to_disk(tmp_path / "train.spacy")
    config = init_config(lang="en", pipeline=["tagger"], optimize="efficiency")
    config["paths"]["train"] = str(tmp_path / "train.spacy")
    config["paths"]["dev"] = str(tmp_path / "train.spacy")
    config["training"]["max_steps"] = 100000
    config["training"]["patience"] = 0
    config["training"]["eval_frequency"] = 20
    config["training"]["before_update"] = {"@callbacks": "greenkd.train_budget.v1", "seconds": 0, "minutes": 0, "report": None}
    path = tmp_path / "config.cfg"
    config.to_disk(path)
    return path


def _train(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    config = _tagger_setup(tmp_path)
    command = [
        sys.executable, str(ROOT / "benchmarks" / "run.py"), "timed", str(tmp_path / "cost.json"),
        "--merge", str(tmp_path / "run.json"), "--",
        sys.executable, "-m", "spacy", "train", str(config), "--output", str(tmp_path / "out"),
        "--training.before_update.report", str(tmp_path / "run.json"), *overrides,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_budget_stops_training_cleanly(tmp_path):
    result = _train(tmp_path, "--training.before_update.seconds", "8")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "training budget of 8 s reached" in result.stderr
    assert "Aborting" not in result.stdout + result.stderr
    assert (tmp_path / "out" / "model-last" / "meta.json").exists()
    assert (tmp_path / "out" / "model-best" / "meta.json").exists()
    cost = srsly.read_json(tmp_path / "cost.json")
    assert cost["stopped_by_budget"] is True and cost["budget_seconds"] == 8
    assert cost["train_steps"] > 20
    # The budget includes start-up but not much more: the run stops soon after it.
    assert 8 <= cost["wall_seconds"] < 8 + 60
    row = add_train_cost({}, tmp_path / "cost.json")
    assert row["budget_seconds"] == 8 and row["stopped_by_budget"] is True
    assert row["train_steps"] == cost["train_steps"]


def test_no_budget_records_the_steps_of_an_ordinary_end(tmp_path):
    result = _train(tmp_path, "--training.max_steps", "30")
    assert result.returncode == 0, result.stderr[-2000:]
    cost = srsly.read_json(tmp_path / "cost.json")
    assert cost["stopped_by_budget"] is False and cost["budget_seconds"] is None
    assert cost["train_steps"] == 30  # spaCy's last step, as its log's "#" column shows


def test_negative_budget_is_refused():
    with pytest.raises(ValueError, match="E045"):
        create_train_budget(seconds=-1)


def test_budget_decay_follows_the_budget_to_its_end(monkeypatch):
    """greenkd.budget_decay.v1 warms up over its steps, then falls linearly with the
    share of the run's time budget spent, reaching final_rate at the budget's end; a
    run without a budget keeps base_rate and is warned (W007)."""
    from thinc.api import registry

    from greenkd_spacy.training import budget

    now = [1000.0]
    monkeypatch.setattr(budget, "_RUN", {})
    monkeypatch.setattr(budget.time, "monotonic", lambda: now[0])
    schedule = registry.resolve({"lr": {"@schedules": "greenkd.budget_decay.v1", "base_rate": 0.01, "warmup_steps": 2, "final_rate": 0.001}})["lr"]
    # Read when the optimizer is built, before the run's budget callback exists: no warning.
    assert next(schedule) == pytest.approx(0.005)  # base_rate, half warmed up
    with pytest.warns(UserWarning, match="W007"):
        assert next(schedule) == pytest.approx(0.01)  # a step with no budget: base_rate
    create_train_budget(seconds=100)
    assert next(schedule) == pytest.approx(0.01)  # warmed up, nothing spent
    now[0] += 50
    assert next(schedule) == pytest.approx(0.0055)
    now[0] += 60
    assert [next(schedule) for _ in range(2)] == [pytest.approx(0.001)] * 2  # past the end: final_rate
