"""projects/textcat: its spec loads and plans every recorded row; a fine-tuned or pruned
student's row carries the cost of the run it goes on from (continues); a command token
that is only {vars.X} stands for X's words; the seeds
summary finds the runner's models from the spec."""
import shlex
from pathlib import Path

import pytest
import spacy
import srsly

from benchmarks.runner import main as runner
from benchmarks.spec import SpecError, load_spec

from .test_runner import TRAIN, logged, study, write_spec  # noqa: F401  (the fixture)
from .test_textcat_study import write_corpus
from .util import blank_textcat, copying_run

ROOT = Path(__file__).parent.parent
PROJECT = ROOT / "projects" / "textcat"


def test_the_study_spec_names_every_recorded_row(tmp_path, capsys, monkeypatch):
    """Every row of the results files the docs cite is a system's row of the spec (but
    TREC's dan-kd-brown, a transfer set the study no longer makes), so a rerun replaces it."""
    (tmp_path / "spec.yml").write_text((PROJECT / "spec.yml").read_text())
    monkeypatch.chdir(tmp_path)  # nothing trained here
    spec = load_spec(Path("spec.yml"))
    recorded = {row["system"] for name in ("textcat_sst2", "textcat_trec", "textcat_trec_linear_kd")
                for row in srsly.read_json(PROJECT / "results" / f"{name}.json")}
    assert recorded - set(spec.systems) == {"dan-kd-brown"}
    monkeypatch.setenv("STUDY_TRAIN_ARGS", "--training.max_steps 20 --training.eval_frequency 10")
    runner(["spec.yml", "train", "--dry-run"])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("train ")]
    commands = {line.split(":")[0][len("train "):]: shlex.split(line.split(": ", 1)[1]) for line in lines}
    ft = commands["trec/dan-kd-ft-default"]
    # The quick check's overrides come after the recorded ones, so they win.
    assert ft[ft.index("--paths.source") + 1] == "training/trec/dan-kd-default/model-best"
    assert ft[-6:] == ["--system.seed", "0", "--training.max_steps", "20", "--training.eval_frequency", "10"]
    kd = commands["sst2/dan-kd"]
    assert kd[kd.index("--distillation.max_steps") + 1] == "4000" and "--distillation.eval_frequency" not in kd
    assert commands["trec/dan-kd"][commands["trec/dan-kd"].index("--distillation.max_steps") + 1] == "3000"
    assert "sst2/spacy-bow-seed4" in commands and "sst2/tfidf-svm-seed1" not in commands
    # The teacher of the distilled rows comes before them, once per task.
    order = list(commands)
    assert order.index("sst2/teacher-trf-defaults") < order.index("sst2/dan-kd-default")


def test_a_row_that_continues_a_run_carries_its_cost(study):
    write_spec(study, {
        "kd": {"run": TRAIN + " {output}", "budget": "none"},
        "ft": {"run": TRAIN + " {output} {model:kd}", "budget": "none", "continues": "kd"},
        "pruned": {"run": TRAIN + " {output} {model:ft}", "budget": "none", "continues": "ft"},
        "alone": {"run": TRAIN + " {output} {vars.extra} {vars.none}", "budget": "none"},
    }, vars={"extra": "--a 1 --b 2", "none": ""})
    runner(["spec.yml", "train", "--systems", "pruned", "alone"])
    assert logged(study)[:3] == ["training/ta/kd", "training/ta/ft training/ta/kd/model-best", "training/ta/pruned training/ta/ft/model-best"]
    # {vars.extra} alone in its token: its words; an empty one: nothing.
    assert logged(study)[3] == "training/ta/alone --a 1 --b 2"
    srsly.write_json(study / "training/ta/kd/distill_summary.json", {
        "annotation": {"textcat": {"cpu_seconds": 30.0, "wall_seconds": 20.0}}, "training": {"cpu_seconds": 9.0, "wall_seconds": 5.0, "steps": 3},
    })
    for name, cpu in (("kd", 100.0), ("ft", 2.0), ("pruned", 1.0)):
        cost = srsly.read_json(study / f"training/ta/{name}/train_cost.json")
        cost.update(cpu_seconds=cpu, wall_seconds=cpu, command="python -m spacy distill x" if name == "kd" else "python -m spacy train x")
        srsly.write_json(study / f"training/ta/{name}/train_cost.json", cost)
    runner(["spec.yml", "bench"])
    rows = {row["system"]: row for row in srsly.read_json(study / "results/study_ta.json")}
    assert rows["kd"]["train_cpu_seconds"] == 9.0 and rows["kd"]["teacher_annotation_cpu_seconds"] == 30.0
    # KD's training, then each later phase's own seconds; the teacher pass counted once.
    assert rows["ft"]["train_cpu_seconds"] == 11.0 and rows["pruned"]["train_cpu_seconds"] == 12.0
    assert rows["pruned"]["teacher_annotation_cpu_seconds"] == 30.0
    assert rows["alone"]["train_cpu_seconds"] == srsly.read_json(study / "training/ta/alone/train_cost.json")["cpu_seconds"]


def test_continues_must_name_a_system(tmp_path):
    write_spec(tmp_path, {"ft": {"run": "x", "continues": "kd"}})
    with pytest.raises(SpecError, match="systems.ft.continues: 'kd' names no system"):
        load_spec(tmp_path / "spec.yml")


def write_cats(path: Path, items) -> None:
    write_corpus(spacy.blank("en"), path, items)


def test_the_seeds_summary_reads_the_runners_models(study):
    from benchmarks import textcat_seeds

    make = copying_run(blank_textcat(), study)
    write_spec(study, {"bow": {"run": make, "budget": "none"}, "linear": {"run": make, "budget": "none"}}, seeds=[0, 1])
    spec = srsly.read_yaml(study / "spec.yml")
    spec["data"]["ta"]["test_split"] = "ta-split.spacy"
    srsly.write_yaml(study / "spec.yml", spec)
    items = [("a great film", "pos"), ("awful and dull", "neg")]
    write_cats(study / "ta-test.spacy", items)
    runner(["spec.yml", "train"])
    textcat_seeds.main(["--spec", "spec.yml", "--system", "bow", "--system", "linear", "--samples", "50", "-o", "out/seeds_{data}.json"])
    result = srsly.read_json(study / "out/seeds_ta.json")
    assert [run["model"] for run in result["systems"]["linear"]["runs"]] == ["training/ta/linear/model-best", "training/ta/linear-seed1/model-best"]
    assert {c["set"] for c in result["comparisons"]} == {"eval"}  # no test split file: not scored
    write_cats(study / "ta-split.spacy", items)
    textcat_seeds.main(["--spec", "spec.yml", "--system", "bow", "--system", "linear", "--seeds", "1", "--samples", "50", "-o", "out/seeds_{data}.json"])
    result = srsly.read_json(study / "out/seeds_ta.json")
    assert {c["set"] for c in result["comparisons"]} == {"eval", "test"} and len(result["systems"]["bow"]["runs"]) == 1
    with pytest.raises(SystemExit):
        textcat_seeds.main(["--spec", "spec.yml", "--system", "bow", "x", "--system", "linear", "-o", "o.json"])
