"""benchmarks/runner.py: a study's systems trained over data x seeds x budgets from its
spec, resumed, measured into its results file, compared. The systems here are tiny
`python -c` commands that log their arguments and write a model directory."""
import json
import shlex
import sys

import pytest
import srsly

from benchmarks.runner import main as runner
from benchmarks.spec import SpecError, load_spec

from .util import blank_textcat, copying_run

# A "training": logs its arguments, writes {output}/model-best and a budget report.
TRAIN = (
    "python -c 'import json, os, sys, time; out = sys.argv[1]; os.makedirs(out + \"/model-best\", exist_ok=True); time.sleep(0.1); "
    "open(\"log.txt\", \"a\").write(\" \".join(sys.argv[1:]) + \"\\n\"); "
    "json.dump({\"train_steps\": 7}, open(out + \"/run.json\", \"w\"))'"
)
# A "bench": writes its measurement to the --output the runner appends.
BENCH = "python -c 'import json, sys; json.dump({\"las\": 50.0, \"data\": sys.argv[2]}, open(sys.argv[-1], \"w\"))' {model} {test}"


def write_spec(path, systems, **top):
    spec = {
        "results": "results/study_{data}.json",
        "data": {"ta": {"train": "ta-train.spacy", "dev": "ta-dev.spacy", "test": "ta-test.spacy", "lang": "ta"}},
        "seeds": [0],
        "budgets": [10],
        "bench": BENCH,
        "vars": {"width": "64"},
        "systems": systems,
        **top,
    }
    srsly.write_yaml(path / "spec.yml", spec)


def logged(path):
    return (path / "log.txt").read_text().splitlines() if (path / "log.txt").exists() else []


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_placeholders_are_filled_and_a_read_model_is_trained_first(study):
    write_spec(study, {
        "student": {"run": TRAIN + " {output} {model:teacher} {train} {lang} {vars.width} {seed}{seed_suffix}"},
        "teacher": {"run": TRAIN + " {output}", "budget": "none", "seeds": [0]},
        "base": {"run": TRAIN + " {output}", "args": {"training.dropout": "0.1"}},
    })
    runner(["spec.yml", "train", "--seeds", "0", "1", "--var", "width=32"])
    lines = logged(study)
    assert lines[0] == "training/ta/teacher"  # read by student: trained first, once
    assert lines[1].split()[:6] == ["training/ta/student-10", "training/ta/teacher/model-best", "ta-train.spacy", "ta", "32", "0"]
    # Seed 1 reads the teacher of its only seed; the budget is appended.
    assert lines[2].split()[:6] == ["training/ta/student-10-seed1", "training/ta/teacher/model-best", "ta-train.spacy", "ta", "32", "1-seed1"]
    assert "--training.before_update.minutes 10 --training.before_update.report training/ta/student-10-seed1/run.json" in lines[2]
    assert lines[3] == "training/ta/base-10 --training.dropout 0.1 --training.before_update.minutes 10 --training.before_update.report training/ta/base-10/run.json"
    assert len(lines) == 5


def test_each_run_is_timed_and_a_finished_run_is_not_run_again(study):
    write_spec(study, {"base": {"run": TRAIN + " {output}"}})
    runner(["spec.yml", "train"])
    cost = srsly.read_json(study / "training/ta/base-10/train_cost.json")
    assert cost["exit_code"] == 0 and cost["wall_seconds"] >= 0 and cost["cpu_seconds"] >= 0
    assert cost["train_steps"] == 7  # the run's own report, merged
    assert "training/ta/base-10" in cost["command"]
    runner(["spec.yml", "train"])
    assert len(logged(study)) == 1
    runner(["spec.yml", "train", "--force"])
    assert len(logged(study)) == 2


def test_a_failed_run_stops_the_runner_and_is_run_again_next_time(study, capsys):
    failing = ("python -c 'import os, sys; open(\"log.txt\", \"a\").write(\"try\\n\"); "
               "os.path.exists(\"fixed\") or sys.exit(3); os.makedirs(sys.argv[1] + \"/model-best\")' {output}")
    write_spec(study, {"flaky": {"run": failing}, "later": {"run": TRAIN + " {output}"}})
    with pytest.raises(SystemExit) as stopped:
        runner(["spec.yml", "train"])
    assert stopped.value.code == 3
    assert "failed (exit code 3)" in capsys.readouterr().out
    assert srsly.read_json(study / "training/ta/flaky-10/train_cost.json")["exit_code"] == 3
    assert logged(study) == ["try"]  # `later` never ran
    (study / "fixed").write_text("")
    runner(["spec.yml", "train"])
    assert logged(study)[:2] == ["try", "try"] and len(logged(study)) == 3


def test_a_dry_run_prints_every_command_and_runs_none(study, capsys):
    write_spec(study, {
        "base": {"run": "python -m spacy train base.cfg --output {output} --paths.train {train}"},
        "teacher": {"run": TRAIN + " {output}", "budget": "none"},
    })
    runner(["spec.yml", "all", "--seeds", "0", "2", "--dry-run"])
    printed = capsys.readouterr().out.splitlines()
    trains = [line for line in printed if line.startswith("train ")]
    assert [line.split(":")[0] for line in trains] == ["train ta/base-10", "train ta/base-10-seed2", "train ta/teacher", "train ta/teacher-seed2"]
    command = shlex.split(trains[1].split(": ", 1)[1])
    assert command[:6] == ["python", "-m", "benchmarks.timed", "training/ta/base-10-seed2/train_cost.json", "--merge", "training/ta/base-10-seed2/run.json"]
    assert command[-2:] == ["--system.seed", "2"]  # spaCy's own seed, for `spacy train`
    assert not (study / "training").exists() and not (study / "results").exists() and not logged(study)


def test_bench_writes_a_row_per_trained_system_and_skips_the_rest(study, capsys):
    write_spec(study, {
        "base": {"run": TRAIN + " {output}"},
        "teacher": {"run": TRAIN + " {output}", "budget": "none", "seeds": [0]},
        "never": {"run": TRAIN + " {output}"},
        "renamed": {"run": TRAIN + " {output}", "row": "{system}-w{vars.width}{seed_suffix}"},
    })
    runner(["spec.yml", "train", "--systems", "base", "teacher", "renamed", "--seeds", "0", "1"])
    srsly.write_json(study / "training/ta/teacher/distill_summary.json", {
        "annotation": {"parser": {"cpu_seconds": 30.0, "wall_seconds": 20.0}}, "training": {"cpu_seconds": 9.0, "wall_seconds": 5.0, "steps": 3},
    })
    runner(["spec.yml", "bench", "--seeds", "0", "1"])
    assert "ta/never-10: not trained" in capsys.readouterr().out
    rows = {row["system"]: row for row in srsly.read_json(study / "results/study_ta.json")}
    assert list(rows) == ["teacher", "base-10", "renamed-w64", "base-10-seed1", "renamed-w64-seed1"]
    base = rows["base-10-seed1"]
    assert base["las"] == 50.0 and base["model"] == "training/ta/base-10-seed1/model-best" and base["data"] == "ta-test.spacy"
    assert base["train_steps"] == 7 and base["train_wall_seconds"] >= 0
    assert base["command"].endswith("training/ta/base-10-seed1/model-best ta-test.spacy") and base["cores"] >= 1
    # A distilled system's row takes its times from its summary (teacher pass apart); this
    # fake run's own command is not `spacy distill`, so its timed seconds count as a later phase.
    fake = srsly.read_json(study / "training/ta/teacher/train_cost.json")["cpu_seconds"]
    assert rows["teacher"]["teacher_annotation_cpu_seconds"] == 30.0
    assert rows["teacher"]["train_cpu_seconds"] == round(9.0 + fake, 1)
    # Benched again: the rows are replaced, not added.
    runner(["spec.yml", "bench", "--seeds", "0", "1", "--systems", "base"])
    assert len(srsly.read_json(study / "results/study_ta.json")) == 5


def test_bootstrap_pairs_every_seed_and_speed_times_each_group(study, capsys, monkeypatch):
    import spacy
    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    blank = copying_run(nlp, study)
    write_spec(study, {"ours": {"run": blank}, "theirs": {"run": blank}},
               speed="--pretokenized --rounds 1 --min-words 10 --batch-size {vars.width}")
    DocBin(docs=[nlp("John lives in Paris ."), nlp("Mary works .")]).to_disk(study / "ta-test.spacy")
    runner(["spec.yml", "bootstrap", "--pair", "ours", "theirs", "--seeds", "0", "1", "--dry-run"])
    line = capsys.readouterr().out.strip()
    pairs = ["training/ta/ours-10/model-best", "training/ta/theirs-10/model-best", "training/ta/ours-10-seed1/model-best", "training/ta/theirs-10-seed1/model-best"]
    assert line == "bootstrap ta: python -m benchmarks.paired_bootstrap ta-test.spacy --pairs " + " ".join(pairs) + " --names ours-10 theirs-10 --output results/study_ta_bootstrap.json"
    with pytest.raises(SystemExit):  # nothing trained yet
        runner(["spec.yml", "bootstrap", "--pair", "ours", "theirs"])
    runner(["spec.yml", "train"])
    # As the launcher starts it: the result records the runner call that remakes it.
    import benchmarks

    monkeypatch.setattr(benchmarks, "launched_as", ["../../benchmarks/run.py", "runner"])
    monkeypatch.setattr(sys, "argv", ["/x/benchmarks/runner.py", "spec.yml", "speed"])
    runner(["spec.yml", "speed"])
    (result,) = srsly.read_json(study / "results/study_ta_speed.json")
    assert result["systems"] == ["ours-10", "theirs-10"] and result["baseline"] == "theirs-10" and result["batch_size"] == 64
    assert result["command"] == "python ../../benchmarks/run.py runner spec.yml speed"


def test_profile_writes_each_trained_systems_stage_profile_beside_the_results(study, capsys, monkeypatch):
    write_spec(study, {"ours": {"run": TRAIN + " {output}"}, "never": {"run": TRAIN + " {output}"}})
    import spacy
    from spacy.tokens import DocBin
    from typer.testing import CliRunner

    from benchmarks.runner import Runner
    from greenkd_spacy.cli import app

    nlp = spacy.blank("en")
    DocBin(docs=[nlp("John lives in Paris ."), nlp("Mary works .")]).to_disk(study / "ta-test.spacy")
    (study / "training/ta/ours-10").mkdir(parents=True)
    nlp.to_disk(study / "training/ta/ours-10/model-best")  # "ours" trained, "never" not

    def in_process(self, what, tokens):  # the command the runner would start, run here
        assert tokens[:4] == ["python", "-m", "spacy", "greenkd-profile"]
        result = CliRunner().invoke(app, ["profile", *tokens[4:], "--min-words", "50"])
        assert result.exit_code == 0, result.output

    monkeypatch.setattr(Runner, "execute", in_process)
    runner(["spec.yml", "profile"])
    out = capsys.readouterr().out
    assert "profile ta/ours-10: python -m spacy greenkd-profile training/ta/ours-10/model-best ta-test.spacy" in out
    assert "ta/never-10: not trained" in out
    profile = srsly.read_json(study / "results/profile_ta_ours-10.json")
    assert profile["words"] > 0 and profile["words_per_second"] > 0
    assert not (study / "results/profile_ta_never-10.json").exists()


@pytest.mark.parametrize(
    "change,key,problem",
    [
        ({"colour": "red"}, "colour", "unknown key"),
        ({"systems": {"a": {"run": "x {model:nope}"}}}, "systems.a.run", "names no system"),
        ({"systems": {"a": {"run": "x {devv}"}}}, "systems.a.run", "{devv}"),
        ({"systems": {"a": {"run": "x", "budget": "steps"}}}, "systems.a.budget_arg", "missing"),
        ({"systems": {"a": {"run": "x", "budget": "hours"}}}, "systems.a.budget", "minutes, steps, none"),
        ({"systems": {"a": {"run": "x {vars.depth}"}}}, "systems.a.run", "--var depth="),
        ({"systems": {"a": {"run": "x {model:b}"}, "b": {"run": "y {model:a}"}}}, "systems.a", "reads its own model"),
        ({"systems": {"a": {"run": "x {budget}", "budget": "none"}}}, "systems.a.run", "no budget"),
        ({"data": {"ta": {"test": "{vars.nope}/t.spacy"}}}, "data.ta.test", "--var nope="),
        ({"data": {"ta": {"test": "{model:a}/t.spacy"}}}, "data.ta.test", "only {vars.X}"),
    ],
)
def test_a_spec_error_names_the_file_and_the_key(tmp_path, change, key, problem):
    write_spec(tmp_path, {"a": {"run": "x"}})
    spec = srsly.read_yaml(tmp_path / "spec.yml")
    spec.update(change)
    srsly.write_yaml(tmp_path / "spec.yml", spec)
    with pytest.raises(SpecError) as error:
        load_spec(tmp_path / "spec.yml")
    assert str(error.value).startswith(f"{tmp_path / 'spec.yml'}: {key}:") and problem in str(error.value)


def test_a_data_entry_takes_its_paths_from_vars_and_a_var_moves_them(study):
    """A path a project's commands also name (a teacher) is written once, in vars."""
    write_spec(study, {"student": {"run": TRAIN + " {output} {teacher}"}},
               data={"ta": {"teacher": "{vars.teachers}/ta", "test": "t.spacy"}}, vars={"teachers": "assets"})
    assert load_spec(study / "spec.yml").data["ta"]["teacher"] == "assets/ta"
    runner(["spec.yml", "train", "--var", "teachers=elsewhere"])
    assert logged(study)[0].split()[:2] == ["training/ta/student-10", "elsewhere/ta"]


def test_the_launcher_runs_the_runner_from_a_study_directory(study):
    """As a project.yml calls it: `python ../../benchmarks/run.py runner spec.yml ...`."""
    import subprocess
    from pathlib import Path

    write_spec(study, {"base": {"run": TRAIN + " {output}"}})
    launcher = str(Path(__file__).parent.parent / "benchmarks" / "run.py")
    done = subprocess.run([sys.executable, launcher, "runner", "spec.yml", "all"], capture_output=True, text=True, cwd=study)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = json.loads((study / "results/study_ta.json").read_text())
    assert row["system"] == "base-10" and row["train_steps"] == 7


def test_a_textcat_study_bootstraps_accuracy_over_seeds(study):
    """bootstrap: textcat judges B against A by mean accuracy over the seeds
    (benchmarks/textcat_seeds.py), appended to the bootstrap file."""
    import spacy
    from spacy.tokens import DocBin

    make = copying_run(blank_textcat(), study)
    write_spec(study, {"bow": {"run": make, "budget": "none"}, "dan": {"run": make, "budget": "none"}}, bootstrap="textcat")
    nlp = spacy.blank("en")
    docs = []
    for text, label in (("a great film", "pos"), ("awful and dull", "neg")):
        doc = nlp.make_doc(text)
        doc.cats = {"pos": float(label == "pos"), "neg": float(label == "neg")}
        docs.append(doc)
    DocBin(docs=docs).to_disk(study / "ta-test.spacy")
    runner(["spec.yml", "train", "--seeds", "0", "1"])
    for _ in range(2):
        runner(["spec.yml", "bootstrap", "--pair", "bow", "dan", "--seeds", "0", "1"])
    results = srsly.read_json(study / "results/study_ta_bootstrap.json")
    assert len(results) == 2  # appended
    assert set(results[0]["systems"]) == {"bow", "dan"} and len(results[0]["systems"]["dan"]["runs"]) == 2
    assert (results[0]["comparisons"][0]["a"], results[0]["comparisons"][0]["b"]) == ("bow", "dan")


def test_a_run_that_leaves_no_model_stops_the_runner_and_is_trained_again(study, capsys):
    # A training whose budget ends before its first evaluation exits 0 without model-best.
    early = ("python -c 'import os, sys; open(\"log.txt\", \"a\").write(\"try\\n\"); "
             "os.makedirs(sys.argv[1] + (\"/model-best\" if os.path.exists(\"fixed\") else \"/model-last\"), exist_ok=True)' {output}")
    write_spec(study, {"early": {"run": early}})
    with pytest.raises(SystemExit) as stopped:
        runner(["spec.yml", "train"])
    assert stopped.value.code == 1
    assert "before its first evaluation" in capsys.readouterr().out
    runner(["spec.yml", "bench"])
    assert "not trained" in capsys.readouterr().out
    (study / "fixed").write_text("")
    runner(["spec.yml", "train"])
    assert logged(study) == ["try", "try"]
    runner(["spec.yml", "train"])
    assert logged(study) == ["try", "try"]


def test_a_check_adds_its_overrides_to_every_spacy_train_and_distill(study, capsys, monkeypatch):
    monkeypatch.setenv("STUDY_TRAIN_ARGS", "--training.max_steps 4 --training.eval_frequency 2")
    monkeypatch.setenv("STUDY_DISTILL_ARGS", "--distillation.max_steps 4")
    write_spec(study, {
        "base": {"run": "python -m spacy train base.cfg --output {output}"},
        "student": {"run": "python -m spacy distill teacher student.cfg {output}", "budget": "steps", "budget_arg": "distillation.max_steps"},
        "lm": {"run": TRAIN + " {output}", "budget": "none"},
    })
    runner(["spec.yml", "train", "--dry-run"])
    commands = {line.split(":")[0]: line for line in capsys.readouterr().out.splitlines() if line.startswith("train ")}
    assert commands["train ta/base-10"].endswith("--system.seed 0 --training.max_steps 4 --training.eval_frequency 2")
    # Last, so the check's steps win over the system's own budget.
    assert commands["train ta/student-10"].endswith("--distillation.max_steps 10 --distillation.max_steps 4")
    assert "max_steps" not in commands["train ta/lm"]
