"""project.yml is the one workflow layer: it loads as spaCy projects do, every training
is timed (so every result row can carry its cost), no command shells out to a stage
script, and every command says what it makes."""
from pathlib import Path

from weasel.util import load_project_config

ROOT = Path(__file__).parent.parent


def test_project_commands_are_timed_and_declare_outputs():
    config = load_project_config(ROOT)
    commands = {command["name"]: command for command in config["commands"]}
    for workflow in config["workflows"].values():
        assert all(step in commands for step in workflow)
    for name, command in commands.items():
        assert command.get("outputs"), f"{name} declares no outputs"
        for line in command["script"]:
            assert not line.startswith(("bash ", "sh ")), f"{name}: {line}"
            if " -m spacy train " in line:
                assert line.startswith("python benchmarks/run.py timed "), f"{name} trains without benchmarks/timed.py: {line}"


def test_no_stage_scripts_left():
    assert sorted(p.name for p in (ROOT / "benchmarks").glob("*.sh")) == []


def test_continue_run_copies_a_finished_run_with_its_cost_so_far(tmp_path):
    """benchmarks/continue_run.py: the copy resumes with the cost the source had reached
    (taken from its summary where its state predates carried costs); the source is
    untouched, and its cost file is not copied (it would be taken for the new segment's)."""
    import json
    import subprocess
    import sys

    source = tmp_path / "run"
    (source / "model-last").mkdir(parents=True)
    (source / "model-last" / "distill_state.json").write_text(json.dumps({"step": 6000, "history": []}))
    (source / "distill_summary.json").write_text(json.dumps({"training": {"steps": 6000, "wall_seconds": 953.2, "cpu_seconds": 1650.8}}))
    (source / "train_cost.json").write_text("{}")
    script = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "continue_run"]
    result = subprocess.run([*script, str(source), str(tmp_path / "long")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    state = json.loads((tmp_path / "long" / "model-last" / "distill_state.json").read_text())
    assert (state["step"], state["wall_seconds"], state["cpu_seconds"]) == (6000, 953.2, 1650.8)
    assert "wall_seconds" not in json.loads((source / "model-last" / "distill_state.json").read_text())
    assert json.loads((tmp_path / "long" / "distill_state.json").read_text())["wall_seconds"] == 953.2
    assert not (tmp_path / "long" / "train_cost.json").exists()
    # A summary of another step is not this state's cost.
    (source / "distill_summary.json").write_text(json.dumps({"training": {"steps": 5000, "wall_seconds": 1.0}}))
    other = subprocess.run([*script, str(source), str(tmp_path / "other")], check=True, capture_output=True, text=True)
    assert "its own training time only" in other.stdout
    assert "wall_seconds" not in json.loads((tmp_path / "other" / "model-last" / "distill_state.json").read_text())
    missing = subprocess.run([*script, str(tmp_path / "nothing"), str(tmp_path / "x")], capture_output=True, text=True)
    assert missing.returncode == 2 and "not a finished" in missing.stderr


def _training_lines():
    """(project dir, where, command line) of every `spacy train` written out in the root
    project and the study projects: their project.yml scripts and their runner specs."""
    import srsly

    for project in [ROOT, *sorted(p.parent for p in (ROOT / "projects").glob("*/project.yml"))]:
        for command in load_project_config(project)["commands"]:
            for line in command["script"]:
                yield project, command["name"], line
        for spec_path in sorted(project.glob("*.yml")):
            if spec_path.name == "project.yml":
                continue
            spec = srsly.read_yaml(spec_path)
            for name, system in (spec.get("systems") or {}).items():
                args = " ".join(f"--{key} {value}" for key, value in (system.get("args") or {}).items())
                yield project, f"{spec_path.name}: {name}", f"{system.get('run', '')} {args}"


def test_a_step_budget_override_also_moves_the_schedule_end():
    """A command that changes max_steps of a config whose learning rate decays to zero at
    total_steps must move total_steps with it: steps past total_steps train at rate 0,
    so a longer run would silently be the shorter one (the SST-2 teacher command once
    did this)."""
    import shlex

    from confection import Config

    checked = 0
    for project, where, line in _training_lines():
        args = shlex.split(line)
        if "train" not in args or "--training.max_steps" not in args:
            continue
        cfg_path = project / args[args.index("train") + 1]
        if not cfg_path.exists():  # written by an earlier command (e.g. size variants)
            continue
        rate = Config().from_disk(cfg_path, interpolate=False)["training"]["optimizer"].get("learn_rate")
        if not isinstance(rate, dict) or "total_steps" not in rate:
            continue
        steps = args[args.index("--training.max_steps") + 1]
        assert "--training.optimizer.learn_rate.total_steps" in args, f"{project}: {where}: {line}"
        assert args[args.index("--training.optimizer.learn_rate.total_steps") + 1] == steps, f"{project}: {where}"
        checked += 1
    assert checked >= 2
