"""Pipelines timed in alternating passes in one process: speed ratios that drift in the
machine's speed cannot move.

The `greenkd-bench-*` commands time one pipeline per process, so two rows of one bench
run are timed minutes apart, and on this machine the same model's words/s moved by up
to 13 % between runs (docs/benchmarks.md): two NER models of one architecture measured
0.85x and 1.13x of each other in two bench runs. Here the pipelines take turns (A, B,
C, A, B, C, ...) over the same input on one thread, garbage collected untimed before
each pass, and each gets its best and median pass; ratios are against the baseline
(the last model unless --baseline says otherwise).

Input: raw text by default (tokenization included, as greenkd-bench-textcat times it),
with --pretokenized the gold tokens of DATA as fresh docs (as greenkd-bench-labeller
times it: words/s), or with --parser-input the docs greenkd-bench-parser parses (one per
gold sentence, gold sentence starts).

Usage: python benchmarks/run.py speed_interleaved MODEL [MODEL ...] --data DATA.spacy
           [--names A B ...] [--baseline NAME] [--pretokenized | --parser-input] [--rounds 7]
           [--batch-size 1000] [--min-docs 10000] [--min-words 20000]
           [--by-component] [--output RESULT.json]
"""
import argparse
import datetime
import gc
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin

from benchmarks.rows import command_line
from greenkd_spacy.atomic import atomic_write_json
from greenkd_spacy.data.corpus import create_corpus_reader
from greenkd_spacy.bench import MIN_TIMED_WORDS, fresh_docs, one_thread, repeated_texts, timed_pass, timing_copies


def input_docs(nlp: Language, reference: List[Doc], parser_input: bool) -> List[Doc]:
    """A pass's pretokenized input, made untimed: copies of the parser bench's docs, or
    fresh docs of the gold tokens."""
    return [doc.copy() for doc in reference] if parser_input else fresh_docs(nlp, reference)


def pass_timer(
    nlp: Language, reference: List[Doc], pretokenized: bool, batch_size: int, parser_input: bool = False
) -> Callable[[], float]:
    """One timed pass of `nlp` over the input: raw texts, fresh docs of the gold tokens
    (made untimed, as greenkd-bench-labeller makes them), or with `parser_input` copies
    of the docs greenkd-bench-parser parses (one per gold sentence, gold sentence
    starts: a parser run on whole documents without them parses other input)."""
    if not pretokenized:
        texts = [doc.text for doc in reference]
        return lambda: timed_pass(nlp, texts, batch_size)

    def run() -> float:
        docs = input_docs(nlp, reference, parser_input)
        start = time.perf_counter()
        for _ in nlp.pipe(docs, batch_size=batch_size):
            pass
        return time.perf_counter() - start

    return run


def component_timer(
    nlp: Language, reference: List[Doc], pretokenized: bool, batch_size: int, parser_input: bool = False
) -> Callable[[], Dict[str, float]]:
    """One pass like pass_timer's, each component run over all the docs in turn (the
    tokenizer first, on raw text): seconds per component, where the time goes. A
    component over the whole input at once, not batch by batch through the pipeline as
    nlp.pipe runs it, so the sum differs a little from a pass's own time."""

    def run() -> Dict[str, float]:
        seconds: Dict[str, float] = {}
        if pretokenized:
            docs = input_docs(nlp, reference, parser_input)
        else:
            texts = [doc.text for doc in reference]
            start = time.perf_counter()
            docs = [nlp.make_doc(text) for text in texts]
            seconds["tokenizer"] = time.perf_counter() - start
        for name, proc in nlp.pipeline:
            start = time.perf_counter()
            docs = list(proc.pipe(docs, batch_size=batch_size)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
            seconds[name] = time.perf_counter() - start
        return seconds

    return run


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="pipeline directories")
    parser.add_argument("--data", required=True, help=".spacy file with the docs to run")
    parser.add_argument("--names", nargs="+", help="a system name per model (default: the paths)")
    parser.add_argument("--baseline", help="the name whose speed is 1.0x (default: the last model)")
    parser.add_argument("--pretokenized", action="store_true", help="words/s on the gold tokens, not docs/s on raw text")
    parser.add_argument("--parser-input", action="store_true", help="the docs greenkd-bench-parser parses: one per gold sentence, with gold sentence starts (implies --pretokenized)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--min-docs", type=int, default=10000, help="raw text: a pass covers at least this many docs")
    parser.add_argument("--min-words", type=int, default=MIN_TIMED_WORDS, help="--pretokenized: a pass covers at least this many words")
    parser.add_argument("--by-component", action="store_true", help="also time each component alone (the tokenizer too, on raw text), in further alternating rounds: where each pipeline's time goes")
    parser.add_argument("--output", help="append the result to this JSON list")
    args = parser.parse_args(argv)
    names = args.names or args.models
    if len(names) != len(args.models):
        sys.exit(f"--names gives {len(names)} names for {len(args.models)} models: give one per model.")
    baseline = args.baseline or names[-1]
    if baseline not in names:
        sys.exit(f"--baseline {baseline!r} is none of the names {names}.")
    one_thread()
    nlps = [spacy.load(m) for m in args.models]
    args.pretokenized = args.pretokenized or args.parser_input

    def read(nlp: Language) -> List[Doc]:
        """The input in this pipeline's vocab (a parser's labels are its strings)."""
        if args.parser_input:
            reader = create_corpus_reader(Path(args.data), gold_preproc=True, gold_sents=True)
            docs = [eg.predicted for eg in reader(nlp)]
        else:
            docs = list(DocBin().from_disk(args.data).get_docs(nlp.vocab))
        if not docs:
            sys.exit(f"{args.data} has no docs.")
        if args.pretokenized:
            # Whole copies until a pass covers --min-words (as the greenkd-bench-* commands).
            return docs * timing_copies(sum(len(doc) for doc in docs), args.min_words)
        return repeated_texts(docs, args.min_docs)  # whole passes long enough to time

    references = [read(nlp) for nlp in nlps]
    unit = "words" if args.pretokenized else "docs"
    size = sum(len(doc) for doc in references[0]) if args.pretokenized else len(references[0])
    timers = [pass_timer(nlp, ref, args.pretokenized, args.batch_size, args.parser_input) for nlp, ref in zip(nlps, references)]
    for timer in timers:  # warm up: lazy tables, allocator
        timer()
    seconds: List[List[float]] = [[] for _ in nlps]
    for _ in range(args.rounds):
        for i, timer in enumerate(timers):
            # The last pass's garbage collected untimed: otherwise the cyclic GC fires in
            # some passes only, and alternation can hand all the slow ones to one model.
            gc.collect()
            seconds[i].append(timer())
    best = {name: size / min(s) for name, s in zip(names, seconds)}
    median = {name: size / statistics.median(s) for name, s in zip(names, seconds)}
    result = {
        "systems": names,
        "models": args.models,
        "data": args.data,
        "unit": f"{unit}/s",
        f"{unit}_per_pass": size,
        "batch_size": args.batch_size,
        "rounds": args.rounds,
        "threads": 1,
        "baseline": baseline,
        "best": {name: round(value, 1) for name, value in best.items()},
        "median": {name: round(value, 1) for name, value in median.items()},
        "ratio_best": {name: round(value / best[baseline], 3) for name, value in best.items()},
        "ratio_median": {name: round(value / median[baseline], 3) for name, value in median.items()},
        "command": command_line(),
        "date": datetime.date.today().isoformat(),
        "time_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M"),
        "cores": os.cpu_count(),
    }
    for name in names:
        print(
            f"{name}: best {best[name]:,.0f} {unit}/s ({result['ratio_best'][name]:.3f}x), "
            f"median {median[name]:,.0f} ({result['ratio_median'][name]:.3f}x)"
        )
    if args.by_component:
        # After the timed passes, so that they stay what they were without the flag.
        profilers = [component_timer(nlp, ref, args.pretokenized, args.batch_size, args.parser_input) for nlp, ref in zip(nlps, references)]
        parts: List[List[Dict[str, float]]] = [[] for _ in nlps]
        for _ in range(args.rounds):
            for i, profile in enumerate(profilers):
                gc.collect()
                parts[i].append(profile())
        result["component_seconds_best"] = {
            name: {part: round(min(p[part] for p in runs), 4) for part in runs[0]} for name, runs in zip(names, parts)
        }
        result["component_share"] = {
            name: {part: round(sec / sum(per.values()), 3) for part, sec in per.items()}
            for name, per in result["component_seconds_best"].items()
        }
        for name in names:
            shares = ", ".join(f"{part} {share:.0%}" for part, share in result["component_share"][name].items())
            print(f"{name}: {shares}")
    if args.output:
        path = Path(args.output)
        rows = srsly.read_json(path) if path.exists() else []
        rows.append(result)
        atomic_write_json(path, rows)


if __name__ == "__main__":
    main()
