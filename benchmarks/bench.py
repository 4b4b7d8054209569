"""A results row from one of the package's measurements: the measurement (run in this
process by the package's own command, whose options pass through), the system's name,
its training and teacher-pass cost, command, date and cores, written into a results
file (a JSON list; the row of the same system is replaced).

Usage: python benchmarks/run.py bench KIND MODEL DATA --system NAME -o RESULTS.json
           [--train-cost COST.json ...] [--distill-summary SUMMARY.json ...]
           [--train-steps N] [--note TEXT] [--skip-missing] [OPTIONS of the command]
           [:: KIND MODEL DATA --system NAME2 ...]
KIND: parser (spacy greenkd-bench-parser), labeller (greenkd-bench-labeller), textcat
(greenkd-bench-textcat), or compact (greenkd-compact INPUT OUTPUT: the row is named by
INPUT unless --system says otherwise). Every other option is the command's own, e.g.
`bench parser MODEL DATA --system x -o results/x.json -b 256 --gold-pos`.

Several systems are benched in one process by separating their invocations with `::`:
one interpreter start (spaCy and torch imported once) instead of one per system, and the
systems timed one after another in the same process.
"""
import argparse
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import click
import typer
from wasabi import msg

from benchmarks.rows import add_distill_cost, add_train_cost, stamp, write_row

# KIND -> the package command that measures (name on `python -m greenkd_spacy`).
COMMANDS = {"parser": "bench-parser", "labeller": "bench-labeller", "textcat": "bench-textcat", "compact": "compact"}


def command_context(kind: str, args: Sequence[str]) -> click.Context:
    """The package command of KIND with its own arguments parsed (as its CLI parses them)."""
    from greenkd_spacy.cli import app

    command = typer.main.get_command(app).commands[COMMANDS[kind]]
    ctx = command.make_context(COMMANDS[kind], list(args))
    if ctx.params.get("report" if kind == "compact" else "output") is not None:
        raise SystemExit(f"bench {kind}: -o/--output names the results file here; give it once.")
    return ctx


def measure(ctx: click.Context) -> Dict:
    """Run the parsed package command in this process. RETURNS (Dict): its measurement
    (what its own --output would hold)."""
    with ctx:
        return ctx.invoke(ctx.command.callback, **ctx.params)


def add_costs(
    row: Dict,
    train_cost: Optional[List[Path]] = None,
    distill_summary: Optional[List[Path]] = None,
    train_steps: int = 0,
) -> Dict:
    """The training cost of a row: a `spacy distill` run's summary (teacher pass and
    training apart), the timed record(s) around the training (with a summary: their peak
    memory and any later phase, such as fine-tuning)."""
    add_distill_cost(row, distill_summary)
    add_train_cost(row, train_cost, train_steps, peak_only=bool(distill_summary))
    return row


def parse_args(argv: Sequence[str]) -> Tuple[argparse.Namespace, List[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False
    )
    parser.add_argument("kind", choices=sorted(COMMANDS))
    parser.add_argument("--system", "-s", help="row name in the results file (compact: default INPUT)")
    parser.add_argument("--output", "-o", type=Path, required=True, help="results file (a JSON list)")
    parser.add_argument("--train-cost", type=Path, action="append", help="benchmarks/timed.py's record around the training; repeat it for a training in phases (summed). With --distill-summary only its peak memory is taken, plus a later phase's seconds (fine-tuning)")
    parser.add_argument("--distill-summary", type=Path, action="append", help="distill_summary.json of the `spacy distill` run that made MODEL: its teacher-pass and training cost; repeat it for a run resumed with more steps (training summed, the teacher pass counted once)")
    parser.add_argument("--train-steps", type=int, default=0, help="steps the training ran (with --train-cost: steps/s)")
    parser.add_argument("--note", help="free-text note stored with the row")
    parser.add_argument("--skip-missing", action="store_true", help="if MODEL is not a directory, say so and exit 0 (a study benches the systems it has trained)")
    return parser.parse_known_args(argv)


SEPARATOR = "::"


def invocations(argv: Sequence[str]) -> List[List[str]]:
    """argv split at every `::` into the invocations of one system each."""
    groups: List[List[str]] = [[]]
    for arg in argv:
        if arg == SEPARATOR:
            groups.append([])
        else:
            groups[-1].append(arg)
    if any(not group for group in groups):
        raise SystemExit(f"bench: an empty invocation around `{SEPARATOR}`; each needs KIND MODEL DATA --system NAME -o RESULTS.")
    return groups


def main(argv: Sequence[str]) -> None:
    for group in invocations(argv):
        bench_one(group)


def bench_one(argv: Sequence[str]) -> None:
    """Measure one system and write its row."""
    args, rest = parse_args(argv)
    if args.system is None and args.kind != "compact":
        raise SystemExit(f"bench {args.kind}: --system NAME is required (the row's name).")
    ctx = command_context(args.kind, rest)
    model = Path(ctx.params["input_path" if args.kind == "compact" else "model"])
    if args.skip_missing and not model.is_dir():
        msg.info(f"Skipping {args.system or model}: {model} does not exist (not trained in this run).")
        return
    measurement = measure(ctx)
    row = {"system": args.system or str(model), **measurement}
    add_costs(row, args.train_cost, args.distill_summary, args.train_steps)
    if args.note:
        row["note"] = args.note
    stamp(row, model, measurement.get("data"))
    row["data"] = measurement.get("data")  # None, not "None", for a compaction scored on nothing
    write_row(args.output, row)
    msg.good(f"Wrote row '{row['system']}' to {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
