"""`spacy greenkd-bench-parser`: accuracy, speed and size of a parsing pipeline."""
import datetime
import os
import shlex
import sys
from pathlib import Path
from typing import List, Optional, Sequence, Union

import spacy
import srsly
import typer
from wasabi import msg

from ..atomic import atomic_write_json
from ..bench import bench_parser, disk_bytes
from ..data.corpus import create_corpus_reader
from .app import command


def command_line() -> str:
    """The command as a user would type it again."""
    args = [shlex.quote(a) for a in sys.argv[1:]]
    if args and args[0].startswith("greenkd-"):
        return " ".join(["python -m spacy"] + args)
    return " ".join(["python -m greenkd_spacy"] + args)


@command("bench-parser")
def bench_parser_cli(
    model: Path = typer.Argument(..., help="Pipeline directory (or installed package name)"),
    data: Path = typer.Argument(..., help=".spacy file with gold trees to parse and score"),
    system: str = typer.Option(..., "--system", "-s", help="Row name in the results file"),
    output: Optional[Path] = typer.Option(
        None, "--output", "-o", help="JSON list to add the row to (a row of the same system is replaced)"
    ),
    batch_size: int = typer.Option(256, "--batch-size", "-b", help="Docs per nlp.pipe batch"),
    gold_pos: bool = typer.Option(False, "--gold-pos", help="Give the parser gold UPOS (paper setting)"),
    gold_sents: bool = typer.Option(True, "--gold-sents/--no-gold-sents", help="Give gold sentence boundaries"),
    gold_preproc: bool = typer.Option(True, "--gold-preproc/--no-gold-preproc", help="One doc per gold sentence"),
    repeats: int = typer.Option(3, "--repeats", help="Timed passes; the fastest counts"),
    limit: int = typer.Option(0, "--limit", help="Use only the first N docs (0: all)"),
    distill_summary: Optional[List[Path]] = typer.Option(
        None, "--distill-summary", help="distill_summary.json of a `spacy distill` run: adds its teacher-annotation and training cost to the row; repeat it for a run resumed with more steps (training summed, the teacher pass counted once)"
    ),
    train_cost: Optional[List[Path]] = typer.Option(
        None, "--train-cost", help="JSON written by scripts/timed.py around the training; repeat the option for a training in phases (summed)"
    ),
) -> None:
    """Parse DATA with MODEL on one CPU thread; report UAS/LAS (spaCy's scorer), words/s,
    parameters and size on disk, and optionally record them as a JSON row."""
    nlp = spacy.load(model)
    reader = create_corpus_reader(
        data, gold_preproc=gold_preproc, limit=limit, gold_sents=gold_sents, gold_pos=gold_pos
    )
    examples = list(reader(nlp))
    msg.info(f"Parsing {len(examples)} docs with {model} (batch {batch_size}, 1 thread)")
    row = {"system": system}
    row.update(bench_parser(nlp, examples, batch_size=batch_size, repeats=repeats))
    row["disk_bytes"] = disk_bytes(model if Path(model).exists() else None)
    add_distill_cost(row, distill_summary)
    add_train_cost(row, train_cost)
    stamp(row, model, data)
    msg.table({k: v for k, v in row.items() if not isinstance(v, list)})
    if output is not None:
        write_row(output, row)


def add_distill_cost(row: dict, summaries: Union[None, Path, Sequence[Path]]) -> dict:
    """Copy the teacher-annotation and training cost of a `spacy distill` run.

    Several summaries are the phases of one run resumed with a larger step budget: their
    training seconds are summed, while the teacher pass is counted once (the first
    phase's), because every phase trains on the same cached teacher targets.
    """
    paths = [summaries] if isinstance(summaries, Path) else list(summaries or [])
    phases = [srsly.read_json(path) for path in paths if path.exists()]
    if not phases:
        return row
    trainings = [phase.get("training") or {} for phase in phases]
    annotation = phases[0].get("annotation") or {}
    if len(phases) == 1:
        row["distillation_cost"] = {"annotation": annotation, "training": trainings[0]}
    else:
        row["distillation_cost"] = {"annotation": annotation, "training": trainings, "phases": [str(p) for p in paths]}
    # One annotation entry per distilled component.
    row["teacher_annotation_cpu_seconds"] = sum((info or {}).get("cpu_seconds", 0.0) for info in annotation.values())
    row["teacher_annotation_wall_seconds"] = sum((info or {}).get("wall_seconds", 0.0) for info in annotation.values())
    cpu = [training.get("cpu_seconds") for training in trainings]
    row["train_cpu_seconds"] = sum(cpu) if None not in cpu else None
    wall = [training.get("wall_seconds") for training in trainings]
    row["train_wall_seconds"] = round(sum(wall), 1) if None not in wall else None
    steps = [training.get("steps") for training in trainings]
    if None not in steps:
        row["train_steps"] = max(steps)  # a resumed run counts its steps from the start
    return row


def stamp(row: dict, model: object, data: Path) -> dict:
    """Add what makes a benchmark row reproducible: inputs, command, date, machine."""
    row["model"] = str(model)
    row["data"] = str(data)
    row["command"] = command_line()
    row["date"] = datetime.date.today().isoformat()
    row["cores"] = os.cpu_count()
    return row


def add_train_cost(row: dict, train_cost: Union[None, Path, Sequence[Path]], train_steps: int = 0) -> dict:
    """Copy the wall and CPU seconds and the peak memory that scripts/timed.py recorded
    for the training (several files, e.g. a training and its annealing phase, are summed;
    the peak is the largest); with the number of steps it ran, also steps per second."""
    paths = [train_cost] if isinstance(train_cost, Path) else list(train_cost or [])
    costs = [srsly.read_json(path) for path in paths if path.exists()]
    if not costs:
        return row
    cpu = [cost.get("cpu_seconds") for cost in costs]
    # A phase whose CPU time was not recorded makes the total unknown, not smaller.
    row["train_cpu_seconds"] = round(sum(cpu), 1) if None not in cpu else None
    notes = [cost["note"] for cost in costs if cost.get("note")]
    if notes:
        row["train_cost_note"] = " ".join(notes)
    row["train_wall_seconds"] = round(sum(cost["wall_seconds"] for cost in costs), 1)
    peaks = [cost["max_rss_mb"] for cost in costs if cost.get("max_rss_mb") is not None]
    if peaks:
        row["train_max_rss_mb"] = max(peaks)
    if train_steps and row["train_wall_seconds"]:
        row["train_steps"] = train_steps
        row["train_steps_per_second"] = round(train_steps / row["train_wall_seconds"], 2)
    return row


def write_row(output: Path, row: dict) -> None:
    """Replace the row of the same system in the results file (a JSON list), or add it."""
    rows = srsly.read_json(output) if output.exists() else []
    rows = [r for r in rows if r.get("system") != row["system"]] + [row]
    atomic_write_json(output, rows)
    msg.good(f"Wrote row '{row['system']}' to {output}")
