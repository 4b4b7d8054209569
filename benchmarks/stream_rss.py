"""Peak memory of a distillation over a long unlabeled stream (memory must not
grow with the corpus).

Why textcat: its targets are one row per doc, so the cache stays small and what is
measured is the loop (reading, batching, teacher pass, cached targets), not the size of
per-token targets. The teacher is spaCy's BOW textcat trained on TREC's labeled
questions (seconds); the student is spaCy's BOW textcat learning its probabilities
through greenkd's TextcatAdapter, on N sentences of ../shared/data/unlabeled (the four
corpora, repeated until N lines), streamed ([distillation] max_epochs = -1) for
--steps steps... or, with --steps 0, one whole pass over the stream. Each run is a
separate `spacy distill` process under benchmarks/timed.py, which records its peak RSS.

Usage: python benchmarks/run.py stream_rss TREC_DIR UNLABELED_DIR --sizes 100000,1000000
           [--work training/stream] [--output benchmarks/archive/stream_rss.json]
TREC_DIR holds train.spacy and heldout.spacy (benchmarks/textcat_data.py trec convert).
"""
import argparse
import gzip
import itertools
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List, Sequence

import srsly
from spacy.cli.init_config import init_config

from greenkd_spacy.atomic import atomic_write_json, atomic_write_lines

ROOT = Path(__file__).parent.parent


def corpus_lines(unlabeled: Path) -> Iterator[str]:
    """Every non-empty line of the unlabeled corpora, in a fixed order, forever."""
    files = sorted(unlabeled.glob("*.txt.gz"))
    if not files:
        sys.exit(f"no *.txt.gz in {unlabeled}")
    while True:
        for path in files:
            with gzip.open(path, "rt", encoding="utf8") as file_:
                for line in file_:
                    line = line.strip()
                    if line:
                        yield line


def student_config(trec: Path, stream: Path, cache: Path, steps: int, pass_steps: int):
    config = init_config(lang="en", pipeline=["textcat"], optimize="efficiency")
    config["paths"]["train"] = str(trec / "train.spacy")
    config["paths"]["dev"] = str(trec / "heldout.spacy")
    config["corpora"]["stream"] = {"@readers": "greenkd.TextFile.v1", "path": str(stream)}
    config["training"]["logger"] = {"@loggers": "spacy.ConsoleLogger.v1", "progress_bar": False}
    config["distillation"] = {
        "corpus": "corpora.stream", "max_epochs": -1, "max_steps": steps or pass_steps,
        "eval_frequency": max(1, (steps or pass_steps) // 4), "gold_weight": 0.0,
        "shard_size": 5000, "cache_dir": str(cache),
        "optimizer": dict(config["training"]["optimizer"]),
        "batcher": {"@batchers": "spacy.batch_by_sequence.v1", "size": 256, "get_length": None},
    }
    return config


def run(command: List[str]) -> None:
    print("+", " ".join(command), flush=True)
    subprocess.run(command, check=True)


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trec", type=Path)
    parser.add_argument("unlabeled", type=Path)
    parser.add_argument("--sizes", default="100000,1000000", help="stream lengths (sentences), comma-separated")
    parser.add_argument("--steps", type=int, default=0, help="training steps (0: one pass over the stream, 256 docs a step)")
    parser.add_argument("--work", type=Path, default=ROOT / "training" / "stream")
    parser.add_argument("--output", type=Path, default=ROOT / "benchmarks" / "results" / "stream_rss.json")
    args = parser.parse_args(argv)
    python = sys.executable
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    teacher = work / "teacher"
    if not (teacher / "model-best").exists():
        config = init_config(lang="en", pipeline=["textcat"], optimize="efficiency")
        config.to_disk(work / "teacher.cfg")
        run([python, "-m", "spacy", "train", str(work / "teacher.cfg"), "--output", str(teacher),
             "--paths.train", str(args.trec / "train.spacy"), "--paths.dev", str(args.trec / "heldout.spacy"),
             "--training.max_steps", "1000"])
    rows = srsly.read_json(args.output) if args.output.exists() else []
    for size in [int(s) for s in args.sizes.split(",")]:
        stream = work / f"stream-{size}.txt.gz"
        if not stream.exists():
            atomic_write_lines(stream, itertools.islice(corpus_lines(args.unlabeled), size))
        out = work / f"student-{size}"
        config_path = work / f"student-{size}.cfg"
        student_config(args.trec, stream, work / "cache", args.steps, -(-size // 256)).to_disk(config_path)
        cost = out / "cost.json"
        run([python, str(ROOT / "scripts" / "timed.py"), str(cost), "--",
             python, "-m", "spacy", "distill", str(teacher / "model-best"), str(config_path), str(out), "--no-resume"])
        record = srsly.read_json(cost)
        summary = srsly.read_json(out / "distill_summary.json")
        annotation = summary["annotation"]["textcat"]
        row = {
            "sentences": size,
            "peak_rss_mb": record["max_rss_mb"],
            "wall_seconds": record["wall_seconds"],
            "cpu_seconds": record["cpu_seconds"],
            "teacher_pass_wall_seconds": round(annotation.get("wall_seconds", 0.0), 1),
            "teacher_pass_reused": bool(annotation.get("reused")),
            "train_steps": summary["training"]["steps"],
            "docs_trained_on": summary["training"]["steps"] * 256,
            "command": " ".join([Path(python).name, "benchmarks/stream_rss.py", *argv]),
            "cores": __import__("os").cpu_count(),
            "date": __import__("datetime").date.today().isoformat(),
        }
        rows = [r for r in rows if r.get("sentences") != size] + [row]
        atomic_write_json(args.output, rows)
        print(row, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
