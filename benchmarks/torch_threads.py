"""Words/s of a pipeline with greenkd's torch layers on one thread (the default) and on
torch's own setting, in turns, in one process: does the one-thread default cost
anything on a quiet machine, and what does it save on a busy one?

Usage: python benchmarks/run.py torch_threads MODEL TEXT_FILE OUTPUT.json [--limit 1500]
       [--torch-threads N (default: the number of cores)] [--note "beside one training"]

Run it once on a quiet machine and once beside other work; each run appends a row to
OUTPUT.json (the machine's state is what --note says).
"""
import argparse
import datetime
import os
import time
from pathlib import Path

import spacy
import torch

from benchmarks.rows import append_row
from greenkd_spacy.data.text_corpus import iter_texts
from greenkd_spacy.models.torch_threads import ENV


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("text", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--limit", type=int, default=1500)
    parser.add_argument("--torch-threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    nlp = spacy.load(args.model)
    texts = list(iter_texts(args.text, limit=args.limit))
    words = sum(len(nlp.make_doc(text)) for text in texts)
    torch.set_num_threads(args.torch_threads)
    settings = {"greenkd default (1)": "1", f"torch's own ({args.torch_threads})": "0"}
    best = {name: float("inf") for name in settings}
    for _ in range(3):
        for name, value in settings.items():
            os.environ[ENV] = value
            start = time.perf_counter()
            for _ in nlp.pipe(texts, batch_size=256):
                pass
            best[name] = min(best[name], time.perf_counter() - start)
    row = {
        "model": str(args.model), "text": str(args.text), "words": words, "note": args.note,
        "cores": os.cpu_count(), "date": datetime.date.today().isoformat(),
        "words_per_second": {name: round(words / seconds, 1) for name, seconds in best.items()},
    }
    append_row(args.output, row)
    for name, wps in row["words_per_second"].items():
        print(f"{name:24s} {wps:>10,.0f} words/s")


if __name__ == "__main__":
    main()
