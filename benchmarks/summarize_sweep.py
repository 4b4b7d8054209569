"""Record a size sweep: each candidate's held-out score (model-best's meta.json, the
score spaCy selected model-best by, never the evaluation set), size on disk and
training cost, as a JSON list; the candidate with the best held-out score is marked.

Usage: python benchmarks/summarize_sweep.py TRAINING_DIR NAME [NAME ...] -o OUT.json
Each NAME is a directory of TRAINING_DIR holding model-best/ and train_cost.json
(scripts/timed.py). Used by `spacy project run textcat-default-sweep` (issue 22).
"""
import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import List, Sequence

import srsly

from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.bench import disk_bytes


def summarize(training: Path, names: Sequence[str]) -> List[dict]:
    rows = []
    for name in names:
        best = training / name / "model-best"
        if not (best / "meta.json").exists():
            sys.exit(f"{best} has no meta.json: run the sweep first (spacy project run textcat-default-sweep)")
        meta = srsly.read_json(best / "meta.json")
        cost_path = training / name / "train_cost.json"
        cost = srsly.read_json(cost_path) if cost_path.exists() else {}
        rows.append({
            "candidate": name,
            "heldout_score": round(100 * meta["performance"]["cats_score"], 2),
            "disk_bytes": disk_bytes(best),
            "train_wall_seconds": cost.get("wall_seconds"),
            "train_cpu_seconds": cost.get("cpu_seconds"),
            "train_max_rss_mb": cost.get("max_rss_mb"),
        })
    best_score = max(row["heldout_score"] for row in rows)
    for row in rows:
        row["chosen"] = row["heldout_score"] == best_score
    return rows


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("training", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    rows = summarize(args.training, args.names)
    stamp = {
        "command": " ".join(["python", "benchmarks/summarize_sweep.py", *argv]),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    atomic_write_json(args.output, [dict(row, **stamp) for row in rows])
    for row in rows:
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
