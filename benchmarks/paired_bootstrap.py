"""How sure is a LAS difference on a small test set? A paired bootstrap over sentences.

Tamil-TTB's test set is 120 sentences (1,989 words), and one seed moved a system's test
LAS by up to 2 points there, so a 1-2 point gap between two parsers may be the test
set's sampling rather than the parsers. This parses the test set with each pair of
pipelines (A, B) as greenkd-bench-parser does (gold tokens and sentences, no POS),
counts per sentence what spaCy's parser scorer counts (labelled arcs right, predicted,
gold; punctuation left out, labels lowercased), checks that the totals give the
scorer's own LAS, and resamples the sentences with replacement: the same sentence draw
for every pair, so several seeds' pairs are judged together (their mean difference).

Usage: python benchmarks/run.py paired_bootstrap DATA.spacy --pairs A1 B1 [A2 B2 ...]
           [--names NAME_A NAME_B] [--samples 10000] [--seed 0] [--output OUT.json]
Reports, per pair and for the mean over pairs: LAS of A and B, B - A, its 95 % interval
over the resamples, and the share of resamples in which A scores at least B.
"""
import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Dict, Sequence, Tuple

import numpy
import spacy
import srsly
from spacy.pipeline.dep_parser import parser_score
from spacy.training import Example

from benchmarks.rows import command_line
from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.bench import one_thread
from greenkd_spacy.data.corpus import create_corpus_reader

IGNORE_LABELS = ("p", "punct")  # as spaCy's parser scorer


def _label(token) -> str:
    return token.dep_.lower()


def sentence_counts(example: Example) -> Tuple[int, int, int]:
    """(labelled arcs right, arcs predicted, arcs in gold) of one parsed doc, scored as
    Scorer.score_deps scores them (tokens aligned one to one: gold tokenization)."""
    gold = {
        (t.i, t.head.i, _label(t)) for t in example.reference if _label(t) not in IGNORE_LABELS and t.dep_
    }
    pred = {(t.i, t.head.i, _label(t)) for t in example.predicted if _label(t) not in IGNORE_LABELS and t.dep_}
    return len(gold & pred), len(pred), len(gold)


def parse_counts(model: str, data: Path, batch_size: int = 256) -> Tuple[numpy.ndarray, float]:
    """Per-doc counts (n_docs, 3) of one pipeline on the data, and the LAS of spaCy's
    parser scorer (what greenkd-bench-parser reports)."""
    nlp = spacy.load(model)
    examples = list(create_corpus_reader(data, gold_preproc=True, gold_sents=True, gold_pos=False)(nlp))
    docs = list(nlp.pipe([eg.predicted for eg in examples], batch_size=batch_size))
    parsed = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
    counts = numpy.array([sentence_counts(eg) for eg in parsed], dtype="int64")
    return counts, float(parser_score(parsed)["dep_las"])


def las(counts: numpy.ndarray) -> numpy.ndarray:
    """Labelled F-score (spaCy's LAS) of summed counts; counts (..., 3)."""
    right, pred, gold = counts[..., 0], counts[..., 1], counts[..., 2]
    return 100.0 * 2 * right / numpy.maximum(1, pred + gold)


def bootstrap(pairs: Sequence[Tuple[numpy.ndarray, numpy.ndarray]], samples: int, seed: int) -> Dict:
    """B - A per pair and its mean over pairs, on the full set and over resampled sentence sets."""
    n_docs = len(pairs[0][0])
    rng = numpy.random.default_rng(seed)
    draws = rng.integers(0, n_docs, size=(samples, n_docs))
    diffs = []
    for a, b in pairs:
        # counts summed over each resample: (samples, 3)
        diffs.append(las(b[draws].sum(axis=1)) - las(a[draws].sum(axis=1)))
    diffs = numpy.stack(diffs)  # (pairs, samples)
    full = numpy.array([las(b.sum(axis=0)) - las(a.sum(axis=0)) for a, b in pairs])

    def summary(observed: float, resampled: numpy.ndarray) -> Dict:
        low, high = numpy.percentile(resampled, [2.5, 97.5])
        return {
            "b_minus_a": round(float(observed), 2),
            "interval_95": [round(float(low), 2), round(float(high), 2)],
            "share_a_at_least_b": round(float(numpy.mean(resampled <= 0)), 4),
        }

    return {
        "per_pair": [summary(full[i], diffs[i]) for i in range(len(pairs))],
        "mean_over_pairs": summary(full.mean(), diffs.mean(axis=0)),
    }


def main(argv: Sequence[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help=".spacy test set with gold trees")
    parser.add_argument("--pairs", nargs="+", required=True, help="pipelines A1 B1 A2 B2 ... (B - A is reported)")
    parser.add_argument("--names", nargs=2, default=["A", "B"], help="what A and B are, for the report")
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, help="append the result to this JSON list")
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        raise SystemExit(f"--pairs takes pipelines two by two (A then B); got {len(args.pairs)}.")
    one_thread()
    models = list(zip(args.pairs[::2], args.pairs[1::2]))
    pairs, rows = [], []
    for model_a, model_b in models:
        row = {"a": model_a, "b": model_b}
        pair = []
        for side, model in (("a", model_a), ("b", model_b)):
            counts, scorer_las = parse_counts(model, args.data)
            total = float(las(counts.sum(axis=0)))
            if abs(total - 100 * scorer_las) > 0.01:
                raise SystemExit(
                    f"{model}: per-sentence counts give LAS {total:.2f}, spaCy's scorer {100 * scorer_las:.2f}; "
                    "the counting no longer matches the scorer's (labels, punctuation), so the bootstrap would not be of that LAS."
                )
            pair.append(counts)
            row[f"las_{side}"] = round(total, 2)
        pairs.append(tuple(pair))
        rows.append(row)
    result = bootstrap(pairs, args.samples, args.seed)
    for row, summary in zip(rows, result["per_pair"]):
        row.update(summary)
    report = {
        "data": str(args.data),
        "sentences": int(len(pairs[0][0])),
        "a": args.names[0],
        "b": args.names[1],
        "pairs": rows,
        "mean_over_pairs": {
            "las_a": round(float(numpy.mean([r["las_a"] for r in rows])), 2),
            "las_b": round(float(numpy.mean([r["las_b"] for r in rows])), 2),
            **result["mean_over_pairs"],
        },
        "samples": args.samples,
        "seed": args.seed,
        "command": command_line(),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
    }
    print(srsly.json_dumps(report, indent=2))
    if args.output:
        existing = list(srsly.read_json(args.output)) if args.output.exists() else []
        atomic_write_json(args.output, existing + [report])


if __name__ == "__main__":
    main(sys.argv[1:])
