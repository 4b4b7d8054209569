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
                assert line.startswith("python scripts/timed.py "), f"{name} trains without scripts/timed.py: {line}"


def test_no_stage_scripts_left():
    assert sorted(p.name for p in (ROOT / "benchmarks").glob("*.sh")) == []
