"""Text classifiers judged over several seeds: is one better, or was it the seed?

SST-2's GLUE dev set has 872 sentences: one sentence is 0.11 points, and retraining the
same system with another seed moves its accuracy by about a point. One model of each
system (one row each) can therefore not tell a 1-2 point gap from noise. This scores
every seed's model-best of each system on each evaluation set (raw text in, the whole
pipeline, as greenkd-bench-textcat scores a row), reports per system the mean, spread
and range of accuracy and macro-F1, and judges each system against the first by a
paired bootstrap over docs: each resample draws the same docs for every seed of both
systems and compares the systems' mean accuracy over their seeds.

Usage: python benchmarks/run.py textcat_seeds --system NAME MODEL [MODEL ...]
           [--system NAME MODEL [MODEL ...] ...] --data NAME=PATH.spacy [--data ...]
           [--data-if-present NAME=PATH.spacy]
           [--samples 10000] [--seed 0] -o OUT.json
       python benchmarks/run.py textcat_seeds --spec spec.yml --system NAME --system NAME ...
           [--spec-data DATA ...] [--seeds N ...] [--var KEY=VALUE] -o OUT_{data}.json
With --spec the models are those the study runner trains (training/DATA/NAME[-seedN]) and
the evaluation sets each data entry's `test` ("eval") and `test_split` ("test", SST's
labeled test split, where the entry has it and the file exists).
The first --system is A, each other one B; "B - A" is reported with its 95 % interval
and the share of resamples in which A scores at least B (``comparisons``). Each MODEL is a model-best
directory; its training cost is read from train_cost.json beside it (benchmarks/timed.py)
and its held-out score from its meta.json (what spaCy chose it by).
Speed is not measured here: the runner's bench times one model of each system in one run.
"""
import argparse
import datetime
import os
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import numpy
import spacy
import srsly

from greenkd_spacy.atomic import atomic_write_json
from benchmarks.rows import add_train_cost, command_line
from greenkd_spacy.bench import class_scores, macro_f1, one_thread, predicted_labels
from greenkd_spacy.data.corpus import load_docs


def read_gold(path: Path) -> Tuple[List[str], List[str]]:
    """Texts and gold labels (the highest cat) of the docs of a .spacy file with cats."""
    docs = [doc for doc in load_docs(path, spacy.blank("xx").vocab) if doc.cats]
    if not docs:
        sys.exit(f"{path} has no doc with gold cats: convert it with `spacy greenkd-convert-textcat`.")
    return [doc.text for doc in docs], [max(doc.cats, key=doc.cats.get) for doc in docs]


def model_record(model: Path) -> dict:
    """The held-out score spaCy chose the model by and its training cost (the bench rows'
    fields, from benchmarks/timed.py's train_cost.json beside it), where recorded."""
    record: dict = {"model": str(model)}
    meta = model / "meta.json"
    if meta.exists():
        performance = srsly.read_json(meta).get("performance", {})
        if "cats_score" in performance:
            record["heldout_score"] = round(100 * float(performance["cats_score"]), 2)
    return add_train_cost(record, model.parent / "train_cost.json")


def summary(values: Sequence[float]) -> Dict[str, float]:
    array = numpy.asarray(values, dtype="float64")
    return {
        "mean": round(float(array.mean()), 2),
        "std": round(float(array.std(ddof=1)) if len(array) > 1 else 0.0, 2),
        "min": round(float(array.min()), 2),
        "max": round(float(array.max()), 2),
    }


def paired_bootstrap(correct_a: numpy.ndarray, correct_b: numpy.ndarray, samples: int, seed: int) -> dict:
    """B - A in mean accuracy over seeds (points), resampling docs with replacement.

    correct_a, correct_b: (seeds, docs) arrays of 0/1; the seed counts may differ.
    """
    per_doc_a = correct_a.mean(axis=0)
    per_doc_b = correct_b.mean(axis=0)
    n_docs = per_doc_a.shape[0]
    rng = numpy.random.default_rng(seed)
    diffs = numpy.empty(samples)
    for start in range(0, samples, 1000):
        stop = min(samples, start + 1000)
        idx = rng.integers(0, n_docs, size=(stop - start, n_docs))
        diffs[start:stop] = 100 * (per_doc_b[idx].mean(axis=1) - per_doc_a[idx].mean(axis=1))
    low, high = numpy.percentile(diffs, [2.5, 97.5])
    return {
        "b_minus_a": round(float(100 * (per_doc_b.mean() - per_doc_a.mean())), 2),
        "interval_95": [round(float(low), 2), round(float(high), 2)],
        "share_a_at_least_b": round(float((diffs <= 0).mean()), 4),
        "samples": samples,
    }


def evaluate(systems: List[Tuple[str, List[Path]]], datasets: Dict[str, Path], samples: int, seed: int) -> dict:
    """Each system's seeds scored on each evaluation set, and every later system judged
    against the first by a paired bootstrap over docs."""
    one_thread()
    result: dict = {"systems": {}, "comparisons": []}
    correct: Dict[Tuple[str, str], numpy.ndarray] = {}
    gold_of = {name: read_gold(path) for name, path in datasets.items()}
    for name, models in systems:
        runs = [model_record(model) for model in models]
        pipelines = [spacy.load(model) for model in models]  # loaded once for every evaluation set
        for data_name, (texts, gold) in gold_of.items():
            rows = []
            for run, nlp in zip(runs, pipelines):
                predicted = predicted_labels(nlp, texts)
                hits = numpy.array([p == g for p, g in zip(predicted, gold)], dtype="float64")
                rows.append(hits)
                per_class = class_scores(predicted, gold)
                run[data_name] = {"accuracy": round(100 * float(hits.mean()), 2), "macro_f1": macro_f1(per_class)}
                print(f"{name} {run['model']} {data_name}: {run[data_name]}", flush=True)
            correct[(name, data_name)] = numpy.stack(rows)
        entry = {"runs": runs}
        for data_name in datasets:
            entry[data_name] = {
                "accuracy": summary([run[data_name]["accuracy"] for run in runs]),
                "macro_f1": summary([run[data_name]["macro_f1"] for run in runs]),
            }
        heldout = [run["heldout_score"] for run in runs if "heldout_score" in run]
        if heldout:
            entry["heldout_score"] = summary(heldout)
        cpu = [run["train_cpu_seconds"] for run in runs if "train_cpu_seconds" in run]
        if cpu:
            entry["train_cpu_seconds"] = summary(cpu)
        result["systems"][name] = entry
    name_a = systems[0][0]
    for name_b, _ in systems[1:]:
        for data_name, path in datasets.items():
            comparison = {"a": name_a, "b": name_b, "set": data_name, "data": str(path), "docs": len(gold_of[data_name][1])}
            comparison.update(paired_bootstrap(correct[(name_a, data_name)], correct[(name_b, data_name)], samples, seed))
            result["comparisons"].append(comparison)
            print(f"{data_name}: {name_b} - {name_a} = {comparison['b_minus_a']} {comparison['interval_95']}")
    result.update({
        "command": command_line(),
        "date": datetime.date.today().isoformat(),
        "cores": os.cpu_count(),
        "threads": 1,
    })
    return result


def from_spec(spec_path: Path, names: List[str], data_names: Optional[List[str]], seeds: Optional[List[int]],
              overrides: Dict[str, str]) -> Iterator[Tuple[str, List[Tuple[str, List[Path]]], Dict[str, Path]]]:
    """(data, systems, evaluation sets) of a study's spec: each system's model-best of
    every seed where the runner trains it, scored on the data entry's `test` (set "eval")
    and, where the entry has one and it exists, its `test_split` (set "test")."""
    from benchmarks.runs import RunPlan
    from benchmarks.spec import load_spec

    spec = load_spec(spec_path, overrides)
    unknown = [name for name in names if name not in spec.systems] + [d for d in data_names or [] if d not in spec.data]
    if unknown:
        raise SystemExit(f"{spec_path}: no system or data set {', '.join(unknown)}")
    runner = RunPlan(spec, seeds)
    for data in data_names or list(spec.data):
        entry = spec.data[data]
        datasets = {"eval": Path(entry["test"])}
        if entry.get("test_split"):
            if Path(entry["test_split"]).exists():
                datasets["test"] = Path(entry["test_split"])
            else:
                print(f"{entry['test_split']} not found: test not scored")
        systems = [(name, [run.model for run in runner.runs(data, [spec.systems[name]])]) for name in names]
        yield data, systems, datasets


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--system", nargs="+", action="append", required=True, metavar=("NAME", "MODEL"),
                        help="a system's name and its model-best directories, one per seed (two or more systems; the first is the baseline); with --spec, its name only")
    parser.add_argument("--data", action="append", default=[], metavar="NAME=PATH",
                        help="an evaluation set: its name and .spacy file with gold cats")
    parser.add_argument("--data-if-present", action="append", default=[], metavar="NAME=PATH",
                        help="an evaluation set scored only where the file exists (SST-2's labeled test split; TREC has none)")
    parser.add_argument("--spec", type=Path, help="a study's spec.yml: the systems' models are its runs' (run in its directory)")
    parser.add_argument("--spec-data", nargs="+", help="with --spec: its data sets (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, help="with --spec: the seeds (default: the spec's)")
    parser.add_argument("--var", action="append", default=[], metavar="KEY=VALUE", help="with --spec: set {vars.KEY}")
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", type=str, required=True, help="the result (JSON); with --spec, {data} is the data set")
    args = parser.parse_args(argv)
    if args.spec is not None:
        if args.data or args.data_if_present:
            parser.error("with --spec the evaluation sets are the data entries' test (and test_split)")
        if len(args.system) < 2 or any(len(group) != 1 for group in args.system):
            parser.error("with --spec give --system NAME at least twice (the baseline A first)")
        if len(args.spec_data or []) > 1 and "{data}" not in args.output:
            parser.error("-o needs {data} for more than one data set")
        overrides = dict(item.split("=", 1) for item in args.var if "=" in item)
        spec_path, output = args.spec.resolve(), os.path.abspath(args.output)
        os.chdir(spec_path.parent)  # the spec's paths are relative to it
        for data, systems, datasets in from_spec(spec_path, [g[0] for g in args.system], args.spec_data, args.seeds, overrides):
            missing = [str(m) for _, models in systems for m in models if not (m / "config.cfg").exists()]
            if missing:
                parser.error(f"{data}: no trained pipeline at {', '.join(missing)} (train it first)")
            atomic_write_json(Path(output.replace("{data}", data)), evaluate(systems, datasets, args.samples, args.seed))
        return 0
    if not args.data:
        parser.error("give --data NAME=PATH (or --spec)")
    if len(args.system) < 2 or any(len(group) < 2 for group in args.system):
        parser.error("give --system NAME MODEL [MODEL ...] at least twice (the baseline A first)")
    datasets: Dict[str, Path] = {}
    for item in args.data:
        name, sep, path = item.partition("=")
        if not sep or not Path(path).exists():
            parser.error(f"--data {item!r}: expected NAME=PATH with an existing .spacy file")
        datasets[name] = Path(path)
    for item in args.data_if_present:
        name, sep, path = item.partition("=")
        if not sep:
            parser.error(f"--data-if-present {item!r}: expected NAME=PATH")
        if Path(path).exists():
            datasets[name] = Path(path)
        else:
            print(f"{path} not found: {name} not scored")
    systems = [(group[0], [Path(m) for m in group[1:]]) for group in args.system]
    for name, models in systems:
        missing = [str(m) for m in models if not (m / "config.cfg").exists()]
        if missing:
            parser.error(f"system {name}: no trained pipeline at {', '.join(missing)} (train it first)")
    atomic_write_json(Path(args.output), evaluate(systems, datasets, args.samples, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
