"""Copy each student run's records into results/, where they are committed: its
distillation summary (with the agreement over training time), its cost and, where the
run made one, its end-of-run report. training/DATA/RUN/ gives RESULTS/DATA/RUN/:

    python scripts/keep_records.py training results/runs
"""
import shutil
import sys
from pathlib import Path

RECORDS = ("distill_summary.json", "train_cost.json", "report.json")


def main(training: Path, results: Path) -> None:
    runs = sorted(summary.parent for summary in training.glob("*/*/distill_summary.json"))
    if not runs:
        sys.exit(f"No finished student run under {training} (DATA/RUN/distill_summary.json): distil first.")
    for run in runs:
        target = results / run.relative_to(training)
        target.mkdir(parents=True, exist_ok=True)
        for name in RECORDS:
            if (run / name).is_file():
                shutil.copyfile(run / name, target / name)
        print(f"{run} -> {target}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
