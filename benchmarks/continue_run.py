"""Copy a finished `spacy distill` run so that the copy can be resumed with a larger
step budget, leaving the original as it was.

Usage: python benchmarks/run.py continue_run SOURCE_DIR TARGET_DIR [-- COMMAND ...]

`spacy distill` resumes from OUTPUT/model-last, so rerunning it on a copy with a higher
--distillation.max_steps trains only the added steps. The copy leaves out the source's
train_cost.json: the cost file written around the resumed run then covers the added
steps only. The resumed run's distill_summary.json covers all of them: the state in
model-last carries the training seconds so far; for a run finished before states did
(2026-11-26), the copy's state takes them from the source's distill_summary.json.
Does nothing if TARGET_DIR exists. With `-- COMMAND`, then runs COMMAND (the resumed
`spacy distill ... TARGET_DIR`), so that a study's spec trains such a run as one command.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

from greenkd_spacy.atomic import atomic_write_json


def carry_cost(summary_path: Path, state_path: Path) -> None:
    """Give a state without training seconds those of the finished run's summary."""
    state = json.loads(state_path.read_text(encoding="utf8"))
    if "wall_seconds" in state or not summary_path.exists():
        return
    training = json.loads(summary_path.read_text(encoding="utf8")).get("training") or {}
    if training.get("steps") != state.get("step"):
        # e.g. a run ended by max_epochs after its last checkpoint
        print(
            f"{summary_path} is of step {training.get('steps')}, model-last of step "
            f"{state.get('step')}: the resumed run's summary will count its own training time only."
        )
        return
    for key in ("wall_seconds", "cpu_seconds"):
        if training.get(key) is not None:
            state[key] = training[key]
    atomic_write_json(state_path, state)
    # The copy beside model-last, for people and scripts, says the same.
    atomic_write_json(state_path.parent.parent / state_path.name, state)
    print(f"{state_path}: training cost so far taken from {summary_path}")


def main(source: Path, target: Path) -> int:
    if target.exists():
        print(f"{target} exists: resuming it as it is")
        return 0
    if not (source / "model-last" / "distill_state.json").exists():
        sys.stderr.write(f"{source}/model-last is not a finished `spacy distill` run: run that first.\n")
        return 2
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("train_cost.json"))
    carry_cost(source / "distill_summary.json", tmp / "model-last" / "distill_state.json")
    tmp.rename(target)
    print(f"Copied {source} to {target}")
    return 0


def run(argv: list) -> int:
    paths, command = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    if len(paths) != 2 or ("--" in argv and not command):
        sys.exit(__doc__)
    code = main(Path(paths[0]), Path(paths[1]))
    if code or not command:
        return code
    if command[0] in ("python", "python3"):
        command[0] = sys.executable  # this interpreter, as `spacy project run` does
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
