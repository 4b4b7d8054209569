"""Time LD-Net labeller updates under different batchers (training speed).

The context-aware character LSTM reads a whole sentence's characters, so a batch costs
as much as its longest sentence times its size. This script trains a fresh NoLM
labeller (configs/paper/ner_ldnet.cfg) on the same sentences with spaCy's
`batch_by_sequence` (fixed count, random lengths), `batch_by_words` and
`batch_by_padded` (length buckets), one CPU thread, and reports ms per sentence.

Usage: python benchmarks/run.py ldnet_batching [--train corpus/conll03/train.spacy]
           [--sentences 960] [--output benchmarks/archive/ldnet_batching.json]
"""
import argparse
import datetime
import json
import os
import random
import sys
import time
from typing import Dict, List

import spacy
import torch
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import load_config, load_model_from_config, registry

BATCHERS = {
    "batch_by_sequence(32)": ("spacy.batch_by_sequence.v1", {"size": 32}),
    "batch_by_words(500)": ("spacy.batch_by_words.v1", {"size": 500, "tolerance": 0.2, "discard_oversize": False}),
    "batch_by_padded(500)": ("spacy.batch_by_padded.v1", {"size": 500, "buffer": 256, "discard_oversize": False}),
}


def examples_for(nlp, path: str, n: int, seed: int = 0) -> List[Example]:
    gold = list(DocBin().from_disk(path).get_docs(nlp.vocab))
    random.Random(seed).shuffle(gold)
    return [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d) for d in gold[:n]]


def time_batcher(config, path: str, n: int, name: str) -> Dict:
    nlp = load_model_from_config(config, auto_fill=True)
    examples = examples_for(nlp, path, n)
    optimizer = nlp.initialize(lambda: examples[:200])
    registered, args = BATCHERS[name]
    batches = list(registry.batchers.get(registered)(**args)(examples))
    start = time.perf_counter()
    for batch in batches:
        nlp.update(batch, sgd=optimizer, drop=0.5)
    seconds = time.perf_counter() - start
    return {
        "batcher": name,
        "sentences": len(examples),
        "words": sum(len(eg.reference) for eg in examples),
        "batches": len(batches),
        "seconds": round(seconds, 2),
        "ms_per_sentence": round(1000 * seconds / len(examples), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/paper/ner_ldnet.cfg")
    parser.add_argument("--train", default="corpus/conll03/train.spacy")
    parser.add_argument("--sentences", type=int, default=960)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    if not os.path.exists(args.train):
        sys.exit(f"{args.train} not found: convert CoNLL-2003 first (spacy project run ner-convert)")
    torch.set_num_threads(1)
    config = load_config(args.config, overrides={"paths.train": args.train, "paths.dev": args.train})
    rows = []
    for name in BATCHERS:
        row = time_batcher(config, args.train, args.sentences, name)
        print(json.dumps(row), flush=True)
        rows.append(row)
    for row in rows:
        row.update(
            {
                "command": " ".join(["python"] + sys.argv),
                "date": datetime.date.today().isoformat(),
                "cores": os.cpu_count(),
                "threads": 1,
            }
        )
    if args.output:
        with open(args.output, "w", encoding="utf8") as file_:
            json.dump(rows, file_, indent=2)


if __name__ == "__main__":
    main()
