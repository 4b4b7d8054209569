"""Checkpoints and resume, the same for every long run (`spacy distill`, LM pretraining).

A run writes OUTPUT/model-last (with the run's state: step, best score, history) and
OUTPUT/model-best, each as a whole directory swapped in by renames, so weights and the
step they belong to are replaced together; rerunning the same command reads model-last's
state and goes on. A kill between a swap's two renames is repaired before reading.
"""
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import srsly

from .atomic import recover_directory, write_directory

LAST, BEST = "model-last", "model-best"


def resume_state(output: Path, state_file: str) -> Optional[Dict[str, Any]]:
    """The state saved in OUTPUT/model-last, after repairing an interrupted swap of
    model-last or model-best; None for a new run."""
    for sub in (LAST, BEST):
        recover_directory(output / sub)
    path = output / LAST / state_file
    if not path.exists():
        return None
    return srsly.read_json(path)


def save_checkpoint(
    directory: Path,
    write_files: Callable[[Path], None],
    state: Optional[Dict[str, Any]] = None,
    state_file: str = "state.json",
) -> None:
    """Fill a fresh directory with `write_files(tmp)` (which creates tmp) and the run's
    state, then swap it in for `directory`."""

    def fill(tmp: Path) -> None:
        write_files(tmp)
        if state is not None:
            srsly.write_json(tmp / state_file, state)

    write_directory(directory, fill)
