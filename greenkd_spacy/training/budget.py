"""greenkd.train_budget.v1: stop `spacy train` (or `spacy distill`) after a wall-clock budget.

Why: our benchmarks compare systems at equal training wall-clock, and spaCy's loop can
stop on steps, epochs or patience but not on time. A step budget is not a fair stand-in:
a spaCy CNN step and a BiLSTM step cost different seconds. The callback sits in
`[training.before_update]`, so it stops between updates, never while a `model-best` is
being written: spaCy's loop then saves `model-last` as it does at any end, and
`model-best` is the best evaluation so far. The clock starts when the config is first
resolved in the process, so pipeline initialization is counted too, for every system;
`spacy distill` starts it again after the teacher pass (`restart_clock`), so that a
budget is the student's training time, whatever the teacher pass cost; a resumed run
carries the training time of its earlier segments, so the budget covers the whole run.

It also records how the run ended (steps, budget, whether the budget stopped it) in a
small JSON file, which `benchmarks/timed.py --merge` adds to the run's cost record.
"""
import atexit
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from spacy.language import Language
from spacy.util import registry

from ..atomic import atomic_write_json
from ..errors import Errors

# One run per process: when the first budget callback was built and what the run did.
# spaCy resolves [training] once to initialize the pipeline and again to train, so two
# callbacks are built; they share the clock (the budget covers initialization) and the
# record (only the one spaCy calls updates it; one report is written at exit). A
# callback built after one was called starts a new run.
_RUN: Dict[str, Any] = {}


@registry.callbacks("greenkd.train_budget.v1")
def create_train_budget(
    seconds: float = 0.0, minutes: float = 0.0, report: Optional[str] = None
) -> Callable[[Language, Dict[str, Any]], None]:
    """Create a `[training.before_update]` callback that ends training after
    `seconds` + 60 * `minutes` of wall-clock time.

    seconds (float): Budget in seconds, initialization included; with minutes 0 too,
        no budget (the callback then only records the steps).
    minutes (float): Budget in minutes, added to seconds (for project.yml variables).
    report (Optional[str]): Where to write {"train_steps", "budget_seconds",
        "stopped_by_budget"} when the process ends; None writes nothing.
    RETURNS (Callable): The callback spaCy calls before every update.
    """
    if seconds < 0 or minutes < 0:
        raise ValueError(Errors.E045.format(seconds=seconds, minutes=minutes))
    seconds = seconds + 60 * minutes
    if not _RUN or _RUN["called"]:
        # First run of the process, or a new run after one that trained (a second
        # `spacy train` in a notebook): a new clock and record.
        _RUN.clear()
        _RUN["called"] = False
        _RUN["clock"] = {"start": time.monotonic()}
        _RUN["state"] = {"train_steps": 0, "budget_seconds": None, "stopped_by_budget": False}
        _RUN["reports"] = set()
    clock = _RUN["clock"]
    state: Dict[str, Any] = _RUN["state"]
    state["budget_seconds"] = seconds or None
    if report and report not in _RUN["reports"]:
        _RUN["reports"].add(report)
        atexit.register(lambda: atomic_write_json(Path(report), state))

    def before_update(nlp: Language, info: Dict[str, Any]) -> None:
        _RUN["called"] = True
        state["train_steps"] = int(info.get("step", 0))
        if seconds and time.monotonic() - clock["start"] >= seconds:
            state["stopped_by_budget"] = True
            print(
                f"greenkd: training budget of {seconds:g} s reached at step "
                f"{state['train_steps']}; model-best holds the best evaluation so far.",
                file=sys.stderr,
                flush=True,
            )
            # SystemExit passes spaCy's `except Exception` (no "Aborting" traceback) and
            # its `finally` still saves model-last; the process exits with status 0.
            raise SystemExit(0)

    return before_update


def budget_progress() -> Optional[float]:
    """The fraction of the current run's time budget spent (0 to 1), or None when the
    run has no budget: what greenkd.budget_decay.v1 follows."""
    if not _RUN or not _RUN["state"]["budget_seconds"]:
        return None
    return min(1.0, (time.monotonic() - _RUN["clock"]["start"]) / _RUN["state"]["budget_seconds"])


def restart_clock(spent: float = 0.0) -> None:
    """Start the budget of the current run now, `spent` seconds of it already used:
    `spacy distill` calls it when the student's training begins, after the teacher
    pass, with the training seconds of the segments a resumed run goes on from, so
    that a resumed run has what is left of its budget (and a budget_decay schedule
    goes on from where it stopped) instead of a whole new one."""
    if spent < 0:
        raise ValueError(Errors.E085.format(spent=spent))
    if _RUN:
        _RUN["clock"]["start"] = time.monotonic() - spent
