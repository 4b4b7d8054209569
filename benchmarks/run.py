"""Run a module of the benchmarks package as a script, from anywhere.

Usage: python benchmarks/run.py MODULE [ARGS...]
       (from a study project: python ../../benchmarks/run.py MODULE [ARGS...])

Puts the repository root on sys.path and runs benchmarks.MODULE as __main__, so a
project.yml calls every lab tool the same way without installing the lab, e.g.
`python ../../benchmarks/run.py runner spec.yml train --budgets 10 --seeds 0 1`.
"""
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        modules = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_") and p.stem != "run")
        sys.exit(__doc__ + "\nModules: " + ", ".join(modules))
    module = argv[0].removesuffix(".py").replace("/", ".")
    if not (ROOT / "benchmarks" / f"{module.replace('.', '/')}.py").is_file():
        sys.exit(f"benchmarks/run.py: no module benchmarks/{module}.py (see `python {sys.argv[0]} --help`).")
    sys.path.insert(0, str(ROOT))
    import benchmarks

    benchmarks.launched_as = [sys.argv[0], module]
    sys.argv = [str(ROOT / "benchmarks" / f"{module}.py"), *argv[1:]]
    runpy.run_module(f"benchmarks.{module}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
