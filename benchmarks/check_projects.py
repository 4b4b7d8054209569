"""Run every study project (and the root quickstart) end to end on tiny budgets.

Usage: python benchmarks/run.py check_projects [--spec projects/checks.yml]
           [--only NAME ...] [--scratch DIR] [--report FILE]

Reads the spec (the environment of every check, and per project its path, the workflow
to run and its tiny vars), runs `python -m spacy project run WORKFLOW PATH --vars.K V ...` for
each, timed, and writes a JSON report (project, exit code, wall seconds, the command).
The results go under --scratch, so a check never touches a project's results/. Run it
in a fresh clone: a project's finished runs are not run again, so training/ left from
earlier runs would make the check prove nothing.
"""
import argparse
import gzip
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import srsly

from greenkd_spacy.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parent.parent
# The small unlabeled file the distillation studies read in a check.
SMALL_TEXT = ["The teacher labels these sentences once.", "A student learns from them quickly."] * 50


def command_of(entry: Dict, scratch: Path) -> List[str]:
    """The `spacy project run` command of one spec entry, {scratch} filled in."""
    command = [sys.executable, "-m", "spacy", "project", "run", entry["workflow"], str(ROOT / entry["path"])]
    for key, value in entry.get("vars", {}).items():
        command += [f"--vars.{key}", str(value).replace("{scratch}", str(scratch))]
    return command


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", default=str(ROOT / "projects" / "checks.yml"))
    parser.add_argument("--only", nargs="*", help="Check these projects (names in the spec) only")
    parser.add_argument("--scratch", default="/tmp/greenkd-project-checks", help="Where the results go")
    parser.add_argument("--report", help="JSON report (default SCRATCH/check_report.json)")
    args = parser.parse_args(argv)
    spec = srsly.read_yaml(args.spec)
    projects = spec["projects"]
    unknown = sorted(set(args.only or []) - set(projects))
    if unknown:
        parser.error(f"no project {unknown} in {args.spec}; it has {sorted(projects)}")
    scratch = Path(args.scratch).resolve()
    scratch.mkdir(parents=True, exist_ok=True)
    with gzip.open(scratch / "small.txt.gz", "wt", encoding="utf8") as handle:
        handle.write("\n".join(SMALL_TEXT) + "\n")
    report = []
    report_path = Path(args.report or scratch / "check_report.json")
    env = dict(os.environ, **{key: str(value) for key, value in spec.get("env", {}).items()})
    for name, entry in projects.items():
        if args.only and name not in args.only:
            continue
        command = command_of(entry, scratch)
        print(f"== {name}: {shlex.join(command)}", flush=True)
        start = time.perf_counter()
        code = subprocess.call(command, env=env, cwd=ROOT)
        report.append({"project": name, "exit_code": code, "wall_seconds": round(time.perf_counter() - start, 1),
                       "command": shlex.join(command), "env": spec.get("env", {})})
        atomic_write_json(report_path, report)
        print(f"== {name}: {'ok' if code == 0 else f'FAILED (exit code {code})'} in {report[-1]['wall_seconds']} s", flush=True)
    failed = [row["project"] for row in report if row["exit_code"]]
    print(f"{len(report) - len(failed)} of {len(report)} projects ran end to end; report: {report_path}")
    if failed:
        print("Failed: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
