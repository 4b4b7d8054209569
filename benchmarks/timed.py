"""Run a command and record its wall-clock and CPU time (user + system, children included).

Why: `spacy train` does not report what a training cost (time, peak memory); the
distillation study compares
training cost of Base-x and D-x, so every training is run through this wrapper.

Usage: python benchmarks/run.py timed OUT.json [--merge RUN.json] -- COMMAND [ARGS...]
       (or, from the repository root, python -m benchmarks.timed ...)

--merge adds the keys of a JSON file the command wrote (greenkd.train_budget.v1's
report: steps run, budget, whether the budget stopped it) to the record.
"""
import json
import os
import resource
import subprocess
import sys
import time


def main(argv: list) -> int:
    usage_line = "usage: python benchmarks/run.py timed OUT.json [--merge RUN.json] -- COMMAND [ARGS...]"
    merge = None
    if len(argv) >= 3 and argv[1] == "--merge":
        merge, argv = argv[2], argv[:1] + argv[3:]
    if len(argv) < 3 or argv[1] != "--":
        sys.exit(usage_line)
    out, command = argv[0], argv[2:]
    if merge and os.path.exists(merge):
        # A record left by an earlier run must not be taken for this one's.
        os.remove(merge)
    if command[0] in ("python", "python3"):
        # As `spacy project run` does for a command's leading python: this interpreter,
        # not whichever one PATH finds.
        command[0] = sys.executable
    start = time.perf_counter()
    code = subprocess.call(command)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = {
        "command": " ".join(command),
        "exit_code": code,
        "wall_seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        # Peak resident memory of the largest child (Linux reports kilobytes).
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "cores": os.cpu_count(),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    if merge and os.path.exists(merge):
        with open(merge, encoding="utf8") as file_:
            record.update(json.load(file_))
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf8") as file_:
        json.dump(record, file_, indent=2)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
