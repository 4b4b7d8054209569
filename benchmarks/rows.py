"""The rows of the studies' results files: a measurement of the package's
greenkd-bench-* commands, plus what makes it a comparable row: the system's name, the
training and teacher-pass cost (benchmarks/timed.py's record, a `spacy distill` run's
distill_summary.json), the command, date and cores. A results file is a JSON list with
one row per system; writing a row replaces the row of the same name."""
import datetime
import os
import shlex
import sys
from pathlib import Path
from typing import Optional, Sequence, Union

import srsly

import benchmarks
from greenkd_spacy.atomic import atomic_write_json


def command_line() -> str:
    """The command as a user would type it again."""
    args = [shlex.quote(a) for a in sys.argv[1:]]
    if benchmarks.launched_as:
        # Run through benchmarks/run.py: named as it was typed, launcher and module.
        return " ".join(["python"] + [shlex.quote(a) for a in benchmarks.launched_as] + args)
    script = Path(sys.argv[0]) if sys.argv else Path()
    if script.suffix == ".py" and script.name != "__main__.py":
        # A script such as benchmarks/tfidf_svm.py, named as it was run.
        try:
            script = script.resolve().relative_to(Path.cwd())
        except ValueError:
            pass
        return " ".join(["python", shlex.quote(str(script))] + args)
    if args and args[0].startswith("greenkd-"):
        return " ".join(["python -m spacy"] + args)
    return " ".join(["python -m greenkd_spacy"] + args)


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
    # One annotation entry per distilled component, but one teacher pass labels every
    # component of a pipeline student: each entry names the components of its pass, and
    # a pass is counted once.
    passes = {}
    for name, info in annotation.items():
        info = info or {}
        passes.setdefault(tuple(info.get("components") or [name]), info)
    row["teacher_annotation_cpu_seconds"] = sum(info.get("cpu_seconds", 0.0) for info in passes.values())
    row["teacher_annotation_wall_seconds"] = sum(info.get("wall_seconds", 0.0) for info in passes.values())
    # A pass resumed over several runs adds the earlier runs' shards (annotate.pass_cost);
    # say where its CPU seconds are partly estimated or incomplete.
    estimated = sum((info.get("earlier_runs") or {}).get("cpu_estimated_shards", 0) for info in passes.values())
    if any(info.get("cpu_seconds_complete") is False for info in passes.values()):
        row["teacher_annotation_note"] = (
            "The teacher pass was resumed, and some shards of its earlier runs recorded no "
            "CPU seconds (and the last run labelled none to estimate them from): the CPU "
            "seconds leave those shards out."
        )
    elif estimated:
        row["teacher_annotation_note"] = (
            f"The teacher pass was resumed; {estimated} shard(s) of its earlier runs recorded "
            "their labelling wall seconds only, so their CPU seconds are estimated from the last "
            "run's CPU/wall ratio (and those runs' start-up is not counted)."
        )
    # A resumed run's summary carries its earlier segments' cost: the first phase counts
    # in full, each later one by its own segment (older summaries, without segments, by
    # their totals), so no phase is counted twice.
    def phase_cost(index: int, training: dict, key: str) -> Optional[float]:
        if index == 0:
            return training.get(key)
        return training.get(f"segment_{key}", training.get(key))

    cpu = [phase_cost(i, training, "cpu_seconds") for i, training in enumerate(trainings)]
    row["train_cpu_seconds"] = sum(cpu) if None not in cpu else None
    wall = [phase_cost(i, training, "wall_seconds") for i, training in enumerate(trainings)]
    row["train_wall_seconds"] = round(sum(wall), 1) if None not in wall else None
    if trainings[0].get("cost_carried") is False:
        row["train_cost_note"] = (
            "Resumed from a run that recorded no training cost in its state: the seconds "
            "cover the segments after it only."
        )
    steps = [training.get("steps") for training in trainings]
    if None not in steps:
        row["train_steps"] = max(steps)  # a resumed run counts its steps from the start
    # The teacher pass's peak is kept apart (the rows count the pass apart). It joins
    # train_max_rss_mb, this `spacy distill` process's peak, only where this process ran
    # the pass: a reused cache's manifest holds the peak of the run that filled it.
    own_pass = [info["max_rss_mb"] for info in passes.values() if info.get("max_rss_mb") is not None and not info.get("reused")]
    pass_peaks = [info["max_rss_mb"] for info in passes.values() if info.get("max_rss_mb") is not None]
    peaks = [training["max_rss_mb"] for training in trainings if training.get("max_rss_mb") is not None]
    if pass_peaks:
        row["teacher_annotation_max_rss_mb"] = max(pass_peaks)
        row["teacher_annotation_reused"] = not own_pass
    if peaks or own_pass:
        row["train_max_rss_mb"] = max(peaks + own_pass)
    return row


def stamp(row: dict, model: object, data: object, command: Optional[str] = None) -> dict:
    """Add what makes a benchmark row reproducible: inputs, command (default: this
    process's), date, machine."""
    row["model"] = str(model)
    row["data"] = str(data)
    row["command"] = command or command_line()
    row["date"] = datetime.date.today().isoformat()
    row["cores"] = os.cpu_count()
    return row


def add_train_cost(
    row: dict, train_cost: Union[None, Path, Sequence[Path]], train_steps: int = 0, *, peak_only: bool = False
) -> dict:
    """Copy the wall and CPU seconds and the peak memory that benchmarks/timed.py recorded
    for the training (several files, e.g. a training and its annealing phase, are summed;
    the peak is the largest); with the number of steps it ran, also steps per second.
    ``peak_only``: a `spacy distill` run's times come from its distill_summary.json
    (teacher pass and training apart); the timed process adds only its peak memory."""
    paths = [train_cost] if isinstance(train_cost, Path) else list(train_cost or [])
    costs = [srsly.read_json(path) for path in paths if path.exists()]
    if not costs:
        return row
    if peak_only:
        peaks = [cost["max_rss_mb"] for cost in costs if cost.get("max_rss_mb") is not None]
        if peaks:
            row["train_max_rss_mb"] = max(peaks + [row.get("train_max_rss_mb") or 0.0])
        # A later phase that is not the distillation (KD + FT: `spacy train` from the
        # distilled model) adds its own seconds to the distillation's training.
        later = [cost for cost in costs if " distill " not in f" {cost.get('command', ' distill ')} "]
        added = False
        for key in ("train_wall_seconds", "train_cpu_seconds"):
            values = [cost.get(key[len("train_"):]) for cost in later]
            if later and row.get(key) is not None:
                row[key] = round(row[key] + sum(values), 1) if None not in values else None
                added = True
        if added:  # the note says what the seconds hold, so only where they were added
            row["train_cost_note"] = " ".join(
                filter(None, [row.get("train_cost_note"), "Training = the distillation + the later phase(s) of --train-cost (e.g. fine-tuning)."])
            )
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
    # Steps and budget as greenkd.train_budget.v1 recorded them (benchmarks/timed.py --merge);
    # a resumed run counts its steps from the start, so the phases' largest is the total.
    recorded_steps = [cost["train_steps"] for cost in costs if cost.get("train_steps")]
    train_steps = train_steps or (max(recorded_steps) if recorded_steps else 0)
    budgets = [cost["budget_seconds"] for cost in costs if cost.get("budget_seconds")]
    if budgets:
        row["budget_seconds"] = sum(budgets)
        row["stopped_by_budget"] = any(cost.get("stopped_by_budget") for cost in costs)
    if train_steps and row["train_wall_seconds"]:
        row["train_steps"] = train_steps
        row["train_steps_per_second"] = round(train_steps / row["train_wall_seconds"], 2)
    return row


def write_row(output: Path, row: dict) -> None:
    """Replace the row of the same system in the results file (a JSON list), or add it."""
    rows = srsly.read_json(output) if output.exists() else []
    rows = [r for r in rows if r.get("system") != row["system"]] + [row]
    atomic_write_json(output, rows)


def append_row(output: Path, row: dict) -> None:
    """Add a row to the results file (a JSON list), keeping every earlier row: for
    measurements repeated under different conditions (each row says which)."""
    rows = srsly.read_json(output) if output.exists() else []
    atomic_write_json(output, rows + [row])
