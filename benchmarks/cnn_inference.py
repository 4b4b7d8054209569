"""Docs/s of a trained greenkd.NgramCNN.v1 text classifier's network with its inference
table (each word's response to each filter offset, looked up) and with the product at
each position (what training computes), in turns in one process on one thread: what
the table buys on the same weights and the same tokenized docs.

Usage: python benchmarks/run.py cnn_inference MODEL DATA.spacy OUTPUT.json [--repeat 12]
       [--rounds 7] [--note "beside one training"]

Each run appends a row to OUTPUT.json (best and median docs/s of each way).
"""
import argparse
import datetime
import os
import statistics
import time
from pathlib import Path

import spacy
import torch
from spacy.tokens import DocBin

from benchmarks.rows import append_row
from greenkd_spacy.models.pytorch import word_cnn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("data", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--repeat", type=int, default=12, help="passes over the data per timing")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--note", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    nlp = spacy.load(args.model)
    pipe = next((proc for _, proc in nlp.pipeline if getattr(getattr(proc, "model", None), "attrs", {}).get("conv_width")), None)
    if pipe is None:
        raise SystemExit(f"{args.model}: no component with a greenkd.NgramCNN.v1 model")
    texts = [doc.text for doc in DocBin().from_disk(args.data).get_docs(nlp.vocab)] * args.repeat
    docs = list(nlp.tokenizer.pipe(texts))
    ways = {"table": word_cnn.MAX_RESPONSE_FLOATS, "product": 0}
    rates = {name: [] for name in ways}
    for _ in range(args.rounds):
        for name, limit in ways.items():
            word_cnn.MAX_RESPONSE_FLOATS = limit
            start = time.perf_counter()
            for i in range(0, len(docs), args.batch_size):
                pipe.predict(docs[i : i + args.batch_size])
            rates[name].append(len(docs) / (time.perf_counter() - start))
    row = {
        "model": str(args.model), "data": str(args.data), "docs": len(docs), "threads": 1, "note": args.note,
        "cores": os.cpu_count(), "date": datetime.date.today().isoformat(),
        "best": {name: round(max(v)) for name, v in rates.items()},
        "median": {name: round(statistics.median(v)) for name, v in rates.items()},
    }
    append_row(args.output, row)
    for name in ways:
        print(f"{name:8s} best {row['best'][name]:>9,} docs/s, median {row['median'][name]:>9,}")


if __name__ == "__main__":
    main()
