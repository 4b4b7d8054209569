"""Two text classifiers timed in alternating passes, in one process (issue 4's "at least
1x spaCy's bag-of-words textcat in the same run").

`greenkd-bench-textcat` times one pipeline per process, so two rows of one bench run
were still timed minutes apart; on this machine a row moves by up to ~8 % between
passes. Here the pipelines take turns (A, B, A, B, ...) over the same texts, one thread,
tokenization included, and each gets its best and median pass: drift in machine speed
hits both alike. Garbage from the previous pass is collected before each timed pass.

Usage: python benchmarks/textcat_speed_pair.py MODEL_A MODEL_B DATA.spacy
           [--rounds 7] [--batch-size 1000] [--min-docs 10000] [--output RESULT.json]
"""
import argparse
import datetime
import gc
import json
import os
import statistics
import sys
from pathlib import Path

import spacy
import torch
from spacy.tokens import DocBin

from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.bench import repeated_texts, timed_pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs=2, help="two pipeline directories")
    parser.add_argument("data", help=".spacy file with the texts to classify")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--min-docs", type=int, default=10000)
    parser.add_argument("--output", help="append the result to this JSON list")
    args = parser.parse_args()
    torch.set_num_threads(1)
    nlps = [spacy.load(m) for m in args.models]
    texts = [doc.text for doc in DocBin().from_disk(args.data).get_docs(nlps[0].vocab)]
    if not texts:
        sys.exit(f"{args.data} has no docs.")
    texts = repeated_texts(texts, args.min_docs)
    for nlp in nlps:  # warm up: lazy tables, allocator
        list(nlp.pipe(texts[: args.batch_size], batch_size=args.batch_size))
    seconds = [[], []]
    for _ in range(args.rounds):
        for i, nlp in enumerate(nlps):
            # Collect the last pass's garbage untimed: otherwise the cyclic GC fires in
            # every other pass, and alternating passes hand all the slow ones to one model.
            gc.collect()
            seconds[i].append(timed_pass(nlp, texts, args.batch_size))
    result = {
        "models": args.models,
        "data": args.data,
        "docs_per_pass": len(texts),
        "batch_size": args.batch_size,
        "rounds": args.rounds,
        "threads": 1,
        "docs_per_second_best": [round(len(texts) / min(s), 1) for s in seconds],
        "docs_per_second_median": [round(len(texts) / statistics.median(s), 1) for s in seconds],
        "command": "python " + " ".join(sys.argv),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    best, median = result["docs_per_second_best"], result["docs_per_second_median"]
    result["ratio_best"] = round(best[0] / best[1], 3)
    result["ratio_median"] = round(median[0] / median[1], 3)
    for model, b, m in zip(args.models, best, median):
        print(f"{model}: best {b:,.0f} docs/s, median {m:,.0f} docs/s")
    print(f"A/B: best {result['ratio_best']:.3f}x, median {result['ratio_median']:.3f}x")
    if args.output:
        path = Path(args.output)
        rows = json.loads(path.read_text()) if path.exists() else []
        rows.append(result)
        atomic_write_json(path, rows)


if __name__ == "__main__":
    main()
