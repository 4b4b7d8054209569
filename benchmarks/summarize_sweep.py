"""Record a size sweep: each candidate's held-out score (model-best's meta.json, the
score spaCy selected model-best by, never the evaluation set), size on disk and
training cost, as a JSON list; the candidate with the best held-out score is marked.

Usage: python benchmarks/run.py summarize_sweep TRAINING_DIR NAME [NAME ...] -o OUT.json
           [--score cats_score] [--max-disk-bytes N] [--report-eval EVAL.spacy]
           [--heldout HELDOUT.spacy]
Each NAME is a directory of TRAINING_DIR holding model-best/ and train_cost.json
(benchmarks/timed.py); --score names the dev score of meta.json's "performance" (ents_f
for NER, spans_chunks_f for chunking). --report-eval also records each candidate's score
on an evaluation set (``eval_score``), for the record only: the choice never reads it.
--max-disk-bytes leaves larger candidates out of the choice (the DAN: <= 30 MB).
--heldout scores every candidate on that held-out file instead of reading meta.json:
for candidates made without training (a pruned copy's meta.json still holds the score of
the model it was cut from).
Used by `spacy project run textcat-default-sweep`
and `labeller-default-sweep`.
"""
import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

import spacy
import srsly
from spacy.training import Corpus

from benchmarks.rows import command_line
from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.bench import disk_bytes


def summarize(
    training: Path,
    names: Sequence[str],
    score: str = "cats_score",
    max_disk_bytes: int = 0,
    heldout: Optional[Path] = None,
) -> List[dict]:
    rows = []
    for name in names:
        best = training / name / "model-best"
        if not (best / "meta.json").exists():
            sys.exit(f"{best} has no meta.json: run the sweep first (spacy project run textcat-default-sweep)")
        meta = srsly.read_json(best / "meta.json")
        if not heldout and score not in meta.get("performance", {}):
            sys.exit(f"{best}/meta.json has no score '{score}': pass --score with one of {sorted(meta.get('performance', {}))}")
        cost_path = training / name / "train_cost.json"
        cost = srsly.read_json(cost_path) if cost_path.exists() else {}
        rows.append({
            "candidate": name,
            "heldout_score": eval_score(best, heldout, score) if heldout else round(100 * meta["performance"][score], 2),
            "score": score,
            "heldout_source": str(heldout) if heldout else "model-best/meta.json",
            "disk_bytes": disk_bytes(best),
            "train_wall_seconds": cost.get("wall_seconds"),
            "train_cpu_seconds": cost.get("cpu_seconds"),
            "train_max_rss_mb": cost.get("max_rss_mb"),
        })
        if not heldout:
            # The other dev scores of the same evaluation (a parser's tag_acc and dep_uas
            # beside its dep_las), in percent, for the record; the choice reads only
            # `score`. Losses and speed are not scores, and a 0 is spaCy's placeholder for
            # a score nothing in the pipeline predicts (pos_acc without a morphologizer).
            rows[-1]["dev_scores"] = {
                key: round(100 * value, 2) for key, value in meta["performance"].items()
                if isinstance(value, (int, float)) and 0 < value <= 1
                and key not in (score, "speed") and not key.endswith("_loss")
            }
        run_path = training / name / "run.json"  # greenkd.train_budget.v1's report, if any
        if run_path.exists():
            rows[-1]["train_steps"] = srsly.read_json(run_path).get("train_steps")
    # A candidate over the size limit is recorded but cannot be chosen.
    eligible = [row for row in rows if not max_disk_bytes or row["disk_bytes"] <= max_disk_bytes]
    if not eligible:
        sys.exit(f"no candidate is within --max-disk-bytes {max_disk_bytes}")
    best_score = max(row["heldout_score"] for row in eligible)
    for row in rows:
        row["chosen"] = row in eligible and row["heldout_score"] == best_score
        if max_disk_bytes:
            row["max_disk_bytes"] = max_disk_bytes
    return rows


def eval_score(model: Path, data: Path, score: str) -> float:
    """The model's `score` on the docs of a .spacy file, in percent."""
    nlp = spacy.load(model)
    examples = list(Corpus(data)(nlp))
    return round(100 * nlp.evaluate(examples)[score], 2)


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("training", type=Path)
    parser.add_argument("names", nargs="+")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--score", default="cats_score", help="the dev score in model-best/meta.json to choose by")
    parser.add_argument("--max-disk-bytes", type=int, default=0, help="only candidates this small on disk can be chosen (0: any)")
    parser.add_argument("--heldout", type=Path, help="score every candidate on this held-out .spacy file instead of reading meta.json (for untrained candidates such as pruned copies)")
    parser.add_argument("--report-eval", type=Path, help="also record each model-best's score on this .spacy file (not used to choose)")
    args = parser.parse_args(argv)
    rows = summarize(args.training, args.names, args.score, args.max_disk_bytes, args.heldout)
    if args.report_eval:
        for row in rows:
            row["eval_score"] = eval_score(args.training / row["candidate"] / "model-best", args.report_eval, args.score)
            row["eval_data"] = str(args.report_eval)
    stamp = {
        "command": command_line(),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    atomic_write_json(args.output, [dict(row, **stamp) for row in rows])
    for row in rows:
        print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
