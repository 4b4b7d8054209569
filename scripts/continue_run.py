"""Copy a finished `spacy distill` run so that the copy can be resumed with a larger
step budget, leaving the original as it was.

Usage: python scripts/continue_run.py SOURCE_DIR TARGET_DIR

`spacy distill` resumes from OUTPUT/model-last, so rerunning it on a copy with a higher
--distillation.max_steps trains only the added steps. The copy leaves out the source's
train_cost.json: the cost file written around the resumed run then covers the added
steps only (the study sums the phases). Does nothing if TARGET_DIR exists.
"""
import shutil
import sys
from pathlib import Path


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
    tmp.rename(target)
    print(f"Copied {source} to {target}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
