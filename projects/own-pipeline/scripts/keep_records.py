"""Copy a student run's records (its distillation summary, with the agreement over
training time, its cost and, where the run made one, its end-of-run report) into
results/, where they are committed:

    python scripts/keep_records.py training/student-greenkd results/own_pipeline_md_greenkd
"""
import shutil
import sys
from pathlib import Path


def main(run: Path, prefix: str) -> None:
    for source, suffix in (("distill_summary.json", "_distill_summary.json"), ("cost.json", "_distill_cost.json")):
        if not (run / source).is_file():
            sys.exit(f"{run / source} is missing: run the distillation first.")
        target = Path(prefix + suffix)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / source, target)
        print(f"{run / source} -> {target}")
    if (run / "report.json").is_file():
        shutil.copyfile(run / "report.json", prefix + "_report.json")
        print(f"{run / 'report.json'} -> {prefix}_report.json")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), sys.argv[2])
