"""The command line shared by the target checkers (summarize_textcat.py,
summarize_labeller.py): read one results JSON per task, run the task's checks, print
each target as met / NOT met / measured with its figures, and write them all as JSON
with --output."""
import argparse
import json
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from greenkd_spacy.atomic import atomic_write_json

Check = Callable[[str, List[Dict]], List[Dict]]


def collector(task: str) -> Tuple[List[Dict], Callable[[str, Optional[bool], str], None]]:
    """A list of checks and the function that adds one: (target, met, figures), where
    met is None for figures that are measured but have no target."""
    checks: List[Dict] = []

    def add(target: str, met: Optional[bool], figures: str) -> None:
        checks.append({"task": task, "target": target, "met": met, "figures": figures})

    return checks, add


def task_of(path: Path) -> str:
    """The task a results file is for: textcat_sst2.json -> sst2, ner_conll03.json -> ner."""
    prefix, _, rest = path.stem.partition("_")
    return rest if prefix == "textcat" else prefix


def main(check: Check, description: str, defaults: Sequence[str], how_to_make: str) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("results", nargs="*", default=list(defaults))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    checks: List[Dict] = []
    for path in map(Path, args.results):
        if not path.exists():
            print(f"- {path}: not found (run {how_to_make} first)")
            continue
        checks.extend(check(task_of(path), json.loads(path.read_text(encoding="utf8"))))
    for c in checks:
        mark = {True: "met", False: "NOT met", None: "measured"}[c["met"]]
        print(f"- {c['task']}: {c['target']}: {mark} ({c['figures']})")
    if args.output:
        atomic_write_json(Path(args.output), checks)
