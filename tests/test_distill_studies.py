"""The distillation studies' specs (projects/parser-distill, projects/pipeline-ewt) and
the lab tool only they use to go on from a finished run (benchmarks/continue_run.py)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.spec import load_spec
from greenkd_spacy.models.sizes import scaled_parser_widths

ROOT = Path(__file__).parent.parent
SIZES = (10, 20, 40, 60, 80)
WIDTH_KEYS = {
    "arc_mlp_size": "components.greenkd_parser.model.arc_mlp_size",
    "label_mlp_size": "components.greenkd_parser.model.label_mlp_size",
    "word_width": "components.greenkd_parser.model.tok2vec.word_width",
    "affix_width": "components.greenkd_parser.model.tok2vec.affix_width",
    "pos_width": "components.greenkd_parser.model.tok2vec.pos_width",
    "hidden_width": "components.greenkd_parser.model.tok2vec.hidden_width",
}


@pytest.mark.parametrize("study", ["parser-distill", "pipeline-ewt"])
def test_the_study_spec_loads_and_names_existing_configs(study):
    spec = load_spec(ROOT / "projects" / study / "spec.yml")
    for system in spec.systems.values():
        for token in system.run.split():
            if token.endswith(".cfg"):
                assert (ROOT / "projects" / study / token).resolve().is_file(), f"{system.name}: {token}"


@pytest.mark.parametrize("percent", SIZES)
def test_each_student_size_is_the_20_percent_config_with_its_widths(percent):
    """Base-x, D-x and D-x-drop of one size share the widths that give x % of the full
    parser's parameters (51 labels on EWT), as the generated configs had them."""
    spec = load_spec(ROOT / "projects" / "parser-distill" / "spec.yml")
    expected = {WIDTH_KEYS[key]: str(value) for key, value in scaled_parser_widths(percent / 100, 51).items()}
    for name in (f"base-{percent}", f"d-{percent}", f"d-{percent}-drop"):
        system = spec.systems[name]
        assert "configs/students/parser_bilstm_student.cfg" in system.run
        assert {k: v for k, v in system.args.items() if k in expected} == expected, name
    assert spec.systems[f"d-{percent}-drop"].args["distillation.dropout"] == "0.33"
    assert "distillation.dropout" not in spec.systems[f"d-{percent}"].args
    assert spec.systems[f"base-{percent}"].budget_arg == "training.max_steps"
    assert spec.systems[f"d-{percent}"].budget_arg == "distillation.max_steps"


def test_continue_run_then_runs_the_resumed_command(tmp_path):
    """`continue_run SOURCE TARGET -- COMMAND`: the copy is made first, then COMMAND runs
    (and its exit code is the tool's); a source that is not a finished run stops it before."""
    source = tmp_path / "run"
    (source / "model-last").mkdir(parents=True)
    (source / "model-last" / "distill_state.json").write_text(json.dumps({"step": 3, "wall_seconds": 1.0}))
    script = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "continue_run"]
    probe = "import os, sys; sys.exit(0 if os.path.isdir(sys.argv[1] + '/model-last') else 7)"
    target = tmp_path / "long"
    done = subprocess.run([*script, str(source), str(target), "--", "python", "-c", probe, str(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    failed = subprocess.run([*script, str(source), str(tmp_path / "x"), "--", "python", "-c", "import sys; sys.exit(5)"])
    assert failed.returncode == 5
    missing = subprocess.run([*script, str(tmp_path / "nothing"), str(tmp_path / "y"), "--", "python", "-c", "print('ran')"], capture_output=True, text=True)
    assert missing.returncode == 2 and "ran" not in missing.stdout
