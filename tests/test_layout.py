"""The product stays apart from the laboratory: a README read in minutes, small project
files, configs by role, no study bookkeeping in the shipped package, and no trace of the
tracker's numbering in what users read. These are the rules a newcomer relies on when
finding their way, so they are checked rather than remembered."""
import re
import subprocess
from pathlib import Path

import pytest
from weasel.util import load_project_config

ROOT = Path(__file__).parent.parent
PROJECTS = sorted(p.parent for p in (ROOT / "projects").glob("*/project.yml"))
ROLES = {"defaults", "students", "teachers", "baselines", "paper"}
# "issue 22", "Issue 3", "issues 5-6", "issue #7"
ISSUE = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)


def tracked(*patterns: str):
    listed = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / line for line in listed.stdout.splitlines() if (ROOT / line).is_file()]


def test_readme_and_benchmark_docs_stay_short():
    assert (ROOT / "README.md").stat().st_size <= 12_000
    assert (ROOT / "docs" / "benchmarks.md").stat().st_size <= 30_000
    assert (ROOT / "docs" / "profiles.md").stat().st_size <= 12_000


@pytest.mark.parametrize("project", [ROOT, *PROJECTS], ids=lambda p: str(p.relative_to(ROOT)) or "root")
def test_every_project_is_small_and_complete(project):
    """Each project.yml stays under 15,000 bytes (a sweep is a runner spec, not unrolled
    commands), every workflow step is a command, and every command says what it makes."""
    assert (project / "project.yml").stat().st_size <= 15_000
    config = load_project_config(project)
    commands = {command["name"]: command for command in config["commands"]}
    for steps in config.get("workflows", {}).values():
        assert all(step in commands for step in steps)
    for name, command in commands.items():
        assert command.get("outputs") or command.get("no_skip"), f"{project}: {name} declares no outputs"
        for line in command["script"]:
            assert not line.startswith(("bash ", "sh ")), f"{name}: {line}"
            if " -m spacy train " in line:
                # every training is timed, so a result row can carry its cost
                assert line.startswith("python ") and " timed " in line, f"{project}: {name}: {line}"


def test_configs_live_in_role_folders():
    assert not list((ROOT / "configs").glob("*.cfg"))
    assert {p.name for p in (ROOT / "configs").iterdir() if p.is_dir()} == ROLES


def test_no_tracker_numbers_in_the_product_or_the_studies():
    files = tracked("README.md", "docs", "configs", "projects", "greenkd_spacy", "benchmarks", "scripts", "project.yml")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        if path.suffix in {".md", ".py", ".pyx", ".cfg", ".yml", ".yaml", ".toml", ".sh", ".txt"}
        for number, line in enumerate(path.read_text(encoding="utf8").splitlines(), start=1)
        if ISSUE.search(line)
    ]
    assert offenders == []


def test_distillation_settings_never_become_pipe_cfg_keys():
    """A run's settings reach the student as a typed object; a key in pipe.cfg would be
    saved with the student and read back by a later, unrelated run."""
    offenders = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in tracked("greenkd_spacy")
        if path.suffix == ".py"
        for line in path.read_text(encoding="utf8").splitlines()
        if re.search(r"cfg(\[|\.get\(|\.setdefault\()\s*[\"']distill_", line)
    ]
    assert offenders == []


def test_the_shipped_package_holds_no_results_bookkeeping():
    """Writing result rows, stamping them and adding up study costs is the lab's
    (benchmarks/), not something a user's `pip install` carries."""
    package = [p for p in tracked("greenkd_spacy") if p.suffix == ".py"]
    for path in package:
        text = path.read_text(encoding="utf8")
        assert not re.search(r"^def (write_row|stamp|add_distill_cost|add_train_cost)\b", text, re.M), path
        assert not re.search(r"^\s*(from|import) benchmarks\b", text, re.M), path


def test_readme_distils_your_pipeline_with_the_commands_that_exist():
    """"Distil your own pipeline" is the generated config and `spacy distill` from raw
    text: the commands the README shows are registered, with the options it uses."""
    from typer.main import get_command
    from spacy.cli._util import app

    import greenkd_spacy.cli  # noqa: F401  (registers our commands on spaCy's app, as its entry point does)

    readme = (ROOT / "README.md").read_text(encoding="utf8")
    section = readme.split("## Distil your own pipeline", 1)[1].split("\n## ", 1)[0]
    assert "python -m spacy greenkd-init-student" in section and "--paths.text" in section
    commands = get_command(app).commands
    assert "greenkd-init-student" in commands and "greenkd-compare" in commands
    assert "--preset" in {opt for param in commands["greenkd-init-student"].params for opt in param.opts}


def test_readme_results_table_is_made_from_the_results_files():
    """Every row of the README's results table is what benchmarks/headline.py computes
    from the studies' committed results (no figure typed in by hand)."""
    from benchmarks.headline import HEADLINES, markdown, measure

    table = markdown([measure(headline) for headline in HEADLINES])
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert table in readme
    assert (ROOT / "docs" / "images" / "accuracy_speed.png").stat().st_size > 10_000
