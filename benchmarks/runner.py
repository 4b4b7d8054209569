"""The study runner: train a study's systems over data x seeds x budgets, measure them
into its results file, and compare them, all from its spec.yml (benchmarks/spec.py).

Usage, from the study project's directory (where its spec and commands' paths live):
    python ../../benchmarks/run.py runner spec.yml ACTION [--data NAME ...]
        [--systems NAME ...] [--seeds N ...] [--budgets M ...] [--var KEY=VALUE ...]
        [--dry-run] [--force] [--pair A B] [--baseline ROW] [--teacher ROW] [--compact]
ACTION:
  train      every (data, system, seed, budget), systems whose model another reads first;
             each run inside benchmarks/timed.py ({output}/train_cost.json). A finished
             run (exit code 0 recorded) is skipped: an interrupted sweep resumes.
  bench      every trained system measured one after another in this one run (its bench
             command, one thread), each a row of the results file (the same row replaced)
  all        train, then bench
  bootstrap  --pair A B: paired bootstrap of B against A over the selected seeds
             (benchmarks/paired_bootstrap.py; textcat: textcat_seeds.py), appended to
             <results stem>_bootstrap.json
  speed      the selected systems of each (data, seed, budget) timed in alternating
             passes (benchmarks/speed_interleaved.py), appended to <results stem>_speed.json
  profile    every trained system's stage profile on the test set, one after another
             (`spacy greenkd-profile`, one thread, best of five passes), written beside
             the results file as profile_{data}_{row}.json
  table      the results file as a Markdown table (benchmarks/render_table.py)
A run's directory is training/{data}/{system}[-{budget}][-seed{seed}]; its row is named
{system}-{budget}[-seed{seed}] (no budget: {system}[-seed{seed}]) unless the spec says.
--dry-run prints every command and runs none; --force trains finished runs again (their
directory removed first). A quick check of a study sets STUDY_TRAIN_ARGS and
STUDY_DISTILL_ARGS in the environment (e.g. "--training.max_steps 20
--training.eval_frequency 10"): config overrides added last to every `spacy train` /
`spacy distill` run (a --vars value of spaCy's cannot start with "--").
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import srsly
from wasabi import msg

from benchmarks.bench import add_costs
from benchmarks.rows import stamp, write_row
from benchmarks.runs import Run, RunPlan, finished
from benchmarks.spec import PLACEHOLDER, Spec, SpecError, System, budget_text, load_spec
from greenkd_spacy.atomic import atomic_write_json

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = ("train", "bench", "all", "bootstrap", "speed", "profile", "table")


# Config overrides from the environment for every `spacy train` / `spacy distill` run.
CHECK_ARGS = {"train": "STUDY_TRAIN_ARGS", "distill": "STUDY_DISTILL_ARGS"}


def runs_spacy(tokens: Sequence[str], command: str) -> bool:
    """Whether a command runs `spacy COMMAND` (directly or wrapped, e.g. continue_run)."""
    return any(a == "spacy" and b == command for a, b in zip(tokens, tokens[1:]))


def executable(tokens: List[str]) -> List[str]:
    """A command's leading `python` as this interpreter, as `spacy project run` does."""
    return [sys.executable, *tokens[1:]] if tokens and tokens[0] in ("python", "python3") else tokens


def lab_env() -> Dict[str, str]:
    """The environment of every command: the repository root importable (benchmarks.*)."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + path if path else ""))


class Runner(RunPlan):
    """The runs of a spec (runs.py), trained, benched and compared."""

    def __init__(
        self, spec: Spec, seeds: Optional[List[int]] = None, budgets: Optional[List[str]] = None,
        dry_run: bool = False, force: bool = False,
    ):
        super().__init__(spec, seeds, budgets)
        self.dry_run = dry_run
        self.force = force

    def fill(self, text: str, run: Optional[Run] = None, data: Optional[str] = None) -> str:
        """The text with its placeholders filled for this run (or only this data set)."""
        data = run.data if run else data
        values = {**self.spec.data[data], "data": data}
        if run is not None:
            values.update(
                output=str(run.output), model=str(run.model), seed=str(run.seed), budget=run.budget or "",
                seed_suffix=run.seed_suffix, system=run.system.name,
            )

        def value(match) -> str:
            name = match.group(1)
            if name.startswith("vars."):
                return self.spec.vars[name[5:]]
            if name.startswith("model:"):
                return str(self.run_of(name[6:], run).model)
            return values[name]

        return PLACEHOLDER.sub(value, text)

    def words(self, command: str, run: Run) -> List[str]:
        """A command's tokens filled in; a token that is only {vars.X} becomes the words
        of X's value (none if it is empty)."""
        tokens = []
        for token in shlex.split(command):
            whole = PLACEHOLDER.fullmatch(token)
            if whole and whole.group(1).startswith("vars."):
                tokens += shlex.split(self.spec.vars[whole.group(1)[5:]])
            else:
                tokens.append(self.fill(token, run))
        return tokens

    def lineage(self, run: Run) -> List[Run]:
        """The runs whose model this run goes on from (systems.NAME.continues), earliest
        first, and the run itself."""
        runs = [run]
        while runs[0].system.continues:
            runs.insert(0, self.run_of(runs[0].system.continues, runs[0]))
        return runs

    def row_name(self, run: Run) -> str:
        default = "{system}{seed_suffix}" if run.budget is None else "{system}-{budget}{seed_suffix}"
        return self.fill(run.system.row or default, run)

    def group(self, run: Run) -> tuple:
        """Sort key: one (seed, budget) group after another, systems in spec order within
        it; a system without a budget first."""
        seed = self.seeds.index(run.seed) if run.seed in self.seeds else len(self.seeds) + run.seed
        budget = -1 if run.budget is None else self.budgets.index(run.budget) if run.budget in self.budgets else len(self.budgets)
        return seed, budget

    def label(self, run: Run) -> str:
        return f"{run.data}/{self.row_name(run)}"

    def results(self, data: str, suffix: str = "") -> Path:
        path = Path(self.fill(self.spec.results, data=data))
        return path.with_name(f"{path.stem}{suffix}{path.suffix}") if suffix else path

    def test_set(self, data: str) -> str:
        if "test" not in self.spec.data[data]:
            raise self.spec.error(f"data.{data}", "no 'test' entry to measure on")
        return self.spec.data[data]["test"]

    # ------------------------------------------------------------------ actions

    def train_command(self, run: Run) -> List[str]:
        """The run's command: its `run` filled in, its `args`, its budget and seed."""
        system = run.system
        tokens = self.words(system.run, run)
        for key, value in system.args.items():
            tokens += [f"--{key}", self.fill(value, run)]
        if system.budget == "minutes":
            tokens += ["--training.before_update.minutes", run.budget, "--training.before_update.report", str(run.output / "run.json")]
        elif system.budget == "steps":
            tokens += [f"--{system.budget_arg}", run.budget]
        if runs_spacy(tokens, "train"):
            tokens += ["--system.seed", str(run.seed)]
        for command, variable in CHECK_ARGS.items():
            if runs_spacy(tokens, command):
                tokens += shlex.split(os.environ.get(variable, ""))
        return tokens

    def execute(self, what: str, tokens: List[str]) -> None:
        """Run a command; a failure stops the runner with its exit code."""
        code = subprocess.call(executable(tokens), env=lab_env())
        if code:
            msg.fail(f"{what} failed (exit code {code}): {shlex.join(tokens)}")
            sys.exit(code)

    def train(self, data_names: List[str], systems: List[System]) -> None:
        for data in data_names:
            for run in self.runs(data, systems):
                if finished(run) and not self.force:
                    msg.info(f"{self.label(run)}: trained already ({run.output}; --force trains it again)")
                    continue
                for needed in run.system.needs():
                    model = self.run_of(needed, run).model
                    if not self.dry_run and not model.is_dir():
                        msg.fail(f"{self.label(run)} reads {needed}'s model {model}, which is not trained: "
                                 f"train it first (--systems {needed}).", exits=1)
                command = ["python", "-m", "benchmarks.timed", str(run.cost), "--merge", str(run.output / "run.json"), "--"]
                command += self.train_command(run)
                print(f"train {self.label(run)}: {shlex.join(command)}", flush=True)
                if self.dry_run:
                    continue
                if run.output.exists() and self.force:
                    shutil.rmtree(run.output)
                self.execute(f"Training {self.label(run)}", command)
                if not run.model.is_dir():
                    msg.fail(f"{self.label(run)} ended without {run.model}: its budget ran out before its "
                             "first evaluation. Give it a larger budget (--budgets) or evaluate more often "
                             "(eval_frequency), then run the runner again.", exits=1)

    def measured_runs(self, data: str, systems: List[System]) -> List[Run]:
        """The runs of `data` that bench and profile measure, in row order: trained to
        the end, and not a stage others go on from; each other run is named and skipped."""
        measured = []
        for run in sorted(self.runs(data, systems), key=self.group):
            if run.system.bench == "none":
                msg.info(f"{self.label(run)}: a stage other systems go on from (bench: none), not benched")
            elif not run.model.is_dir() or (run.cost.is_file() and not finished(run)):
                msg.info(f"{self.label(run)}: not trained ({run.model}), skipped")
            else:
                measured.append(run)
        return measured

    def bench(self, data_names: List[str], systems: List[System]) -> None:
        for data in data_names:
            results = self.results(data)
            for run in self.measured_runs(data, systems):
                template = run.system.bench or self.spec.bench
                if not template:
                    raise self.spec.error(f"systems.{run.system.name}.bench", "no bench command (set bench: at the top or for the system)")
                tokens = self.words(template, run)
                print(f"bench {self.label(run)} -> {results}: {shlex.join(tokens)}", flush=True)
                if self.dry_run:
                    continue
                with tempfile.TemporaryDirectory() as tmp:
                    measured = Path(tmp) / "measurement.json"
                    self.execute(f"Benching {self.label(run)}", tokens + ["--output", str(measured)])
                    measurement = srsly.read_json(measured)
                row = {"system": self.row_name(run), **measurement}
                # Its own cost, after the cost of the runs it goes on from (continues).
                lineage = self.lineage(run)
                costs = [r.cost for r in lineage if r.cost.is_file()]
                summaries = [r.output / "distill_summary.json" for r in lineage if (r.output / "distill_summary.json").is_file()]
                add_costs(row, costs or None, summaries or None)
                stamp(row, run.model, measurement.get("data") or self.test_set(data), command=shlex.join(tokens))
                results.parent.mkdir(parents=True, exist_ok=True)
                write_row(results, row)
                msg.good(f"Wrote row '{row['system']}' to {results}")

    def bootstrap(self, data_names: List[str], pair: Sequence[str]) -> None:
        from benchmarks import paired_bootstrap, textcat_seeds

        system_a, system_b = (self.spec.systems[name] for name in pair)
        for data in data_names:
            for budget in self.budgets_of(system_a):
                seeds = [seed for seed in self.seeds_of(system_a) if seed in self.seeds_of(system_b)]
                runs = [(Run(data, system_a, seed, budget), self.run_of(system_b.name, Run(data, system_a, seed, budget))) for seed in seeds]
                names = [self.row_name(Run(data, r.system, 0, r.budget)) for r in runs[0]]
                missing = [str(r.model) for pair_runs in runs for r in pair_runs if not r.model.is_dir()]
                if missing and not self.dry_run:
                    msg.fail(f"Not trained: {', '.join(missing)}: train them first.", exits=1)
                output = self.results(data, "_bootstrap")
                if not self.dry_run:
                    output.parent.mkdir(parents=True, exist_ok=True)
                if self.spec.bootstrap == "parser":
                    argv = [self.test_set(data), "--pairs", *[str(r.model) for pair_runs in runs for r in pair_runs],
                            "--names", *names, "--output", str(output)]
                    print(f"bootstrap {data}: python -m benchmarks.paired_bootstrap {shlex.join(argv)}", flush=True)
                    if not self.dry_run:
                        paired_bootstrap.main(argv)
                    continue
                argv = [flag for name, side in zip(names, zip(*runs)) for flag in ["--system", name, *[str(r.model) for r in side]]]
                argv += ["--data", f"test={self.test_set(data)}"]
                print(f"bootstrap {data} -> {output}: python -m benchmarks.textcat_seeds {shlex.join(argv)}", flush=True)
                if not self.dry_run:
                    with tempfile.TemporaryDirectory() as tmp:
                        textcat_seeds.main([*argv, "-o", f"{tmp}/result.json"])
                        result = srsly.read_json(f"{tmp}/result.json")
                    atomic_write_json(output, (srsly.read_json(output) if output.exists() else []) + [result])

    def speed(self, data_names: List[str], systems: List[System]) -> None:
        from benchmarks import speed_interleaved

        for data in data_names:
            groups: Dict[tuple, List[Run]] = {}
            for run in self.runs(data, systems):
                groups.setdefault((run.seed, run.budget), []).append(run)
            for (seed, budget), runs in groups.items():
                trained = [run for run in runs if run.model.is_dir() or self.dry_run]
                if len(trained) < 2:
                    msg.info(f"{data}, seed {seed}, budget {budget}: fewer than two trained systems, nothing to time")
                    continue
                argv = [*[str(run.model) for run in trained], "--names", *[self.row_name(run) for run in trained],
                        "--data", self.test_set(data), *shlex.split(self.fill(self.spec.speed, data=data)),
                        "--output", str(self.results(data, "_speed"))]
                print(f"speed {data}: python -m benchmarks.speed_interleaved {shlex.join(argv)}", flush=True)
                if not self.dry_run:
                    self.results(data).parent.mkdir(parents=True, exist_ok=True)
                    speed_interleaved.main(argv)

    def profile(self, data_names: List[str], systems: List[System]) -> None:
        for data in data_names:
            for run in self.measured_runs(data, systems):
                output = self.results(data).parent / f"profile_{data}_{self.row_name(run)}.json"
                tokens = ["python", "-m", "spacy", "greenkd-profile", str(run.model), self.test_set(data),
                          "--output", str(output), "--rounds", "5"]
                print(f"profile {self.label(run)}: {shlex.join(tokens)}", flush=True)
                if not self.dry_run:
                    output.parent.mkdir(parents=True, exist_ok=True)
                    self.execute(f"Profiling {self.label(run)}", tokens)

    def table(self, data_names: List[str], baseline: str = "", teacher: str = "", compact: bool = False) -> None:
        from benchmarks.render_table import render

        for data in data_names:
            path = self.results(data)
            print(f"\n{data}: {path}\n")
            print(render(str(path), baseline, teacher, compact) if path.exists() else "(no rows yet)")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec", type=Path, help="the study's spec.yml (commands run in its directory)")
    parser.add_argument("action", choices=ACTIONS)
    parser.add_argument("--data", nargs="+", help="data sets of the spec (default: all)")
    parser.add_argument("--systems", nargs="+", help="systems of the spec (default: all); train adds the systems their runs read")
    parser.add_argument("--seeds", nargs="+", type=int, help="seeds (default: the spec's; a system's own seeds win)")
    parser.add_argument("--budgets", nargs="+", type=budget_text, help="budgets (default: the spec's; a system's own budgets win)")
    parser.add_argument("--var", action="append", default=[], metavar="KEY=VALUE", help="set {vars.KEY}")
    parser.add_argument("--dry-run", action="store_true", help="print every command, run none")
    parser.add_argument("--force", action="store_true", help="train finished runs again")
    parser.add_argument("--pair", nargs=2, metavar=("A", "B"), help="bootstrap: the systems compared (B - A)")
    parser.add_argument("--baseline", default="", help="table: the row whose speed is 1.00x")
    parser.add_argument("--teacher", default="", help="table: the row that taught the distilled rows")
    parser.add_argument("--compact", action="store_true", help="table: accuracy, speed, size and cost only")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> None:
    args = parse_args(argv)
    overrides = dict(item.split("=", 1) for item in args.var if "=" in item)
    if len(overrides) != len(args.var):
        msg.fail(f"--var takes KEY=VALUE, got {[v for v in args.var if '=' not in v]}", exits=1)
    try:
        spec = load_spec(args.spec, overrides)
        for flag, names, known in (("--data", args.data, spec.data), ("--systems", args.systems, spec.systems),
                                   ("--pair", args.pair, spec.systems)):
            unknown = [name for name in names or [] if name not in known]
            if unknown:
                raise SpecError(f"{flag} {' '.join(unknown)}: not in {args.spec} (it has {', '.join(known)})")
        if args.action == "bootstrap" and not args.pair:
            raise SpecError("bootstrap needs --pair A B (the systems compared)")
        if spec.path.parent != Path():
            os.chdir(spec.path.parent)  # the spec's paths and commands are relative to it
        runner = Runner(spec, args.seeds, args.budgets, args.dry_run, args.force)
        data = args.data or list(spec.data)
        names = args.systems or list(spec.systems)
        if args.action in ("train", "all"):
            runner.train(data, spec.ordered(names))
        if args.action in ("bench", "all"):
            runner.bench(data, spec.ordered(names, with_needed=False))
        if args.action == "bootstrap":
            runner.bootstrap(data, args.pair)
        if args.action == "speed":
            runner.speed(data, spec.ordered(names, with_needed=False))
        if args.action == "profile":
            runner.profile(data, spec.ordered(names, with_needed=False))
        if args.action == "table":
            runner.table(data, args.baseline, args.teacher, args.compact)
    except SpecError as err:
        msg.fail(str(err), exits=1)


if __name__ == "__main__":
    main(sys.argv[1:])
