"""Which runs a study's spec names and where each one lives: the naming that the runner
(which trains and benches them) and the tools that read their models share.

A run is one system trained on one data set with one seed and budget, in
training/{data}/{system}[-{budget}][-seed{seed}]; a system's own `seeds` / `budgets`
override the spec's (or the command line's), and `budget: none` means one run without.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

import srsly

from benchmarks.spec import Spec, System


@dataclass(frozen=True)
class Run:
    """One system trained on one data set with one seed and budget."""

    data: str
    system: System
    seed: int
    budget: Optional[str]

    @property
    def seed_suffix(self) -> str:
        return f"-seed{self.seed}" if self.seed else ""

    @property
    def output(self) -> Path:
        budget = f"-{self.budget}" if self.budget is not None else ""
        return Path("training") / self.data / f"{self.system.name}{budget}{self.seed_suffix}"

    @property
    def model(self) -> Path:
        return self.output / "model-best"

    @property
    def cost(self) -> Path:
        return self.output / "train_cost.json"


def finished(run: Run) -> bool:
    """Whether the run ran to the end and left a model to bench: its cost record says
    it exited cleanly and model-best exists (a training whose budget ended before its
    first evaluation exits cleanly without one)."""
    return run.cost.is_file() and srsly.read_json(run.cost).get("exit_code") == 0 and run.model.is_dir()


class RunPlan:
    """The runs of a spec for the seeds and budgets asked for (default: the spec's)."""

    def __init__(self, spec: Spec, seeds: Optional[List[int]] = None, budgets: Optional[List[str]] = None):
        self.spec = spec
        self.seeds = seeds or spec.seeds
        self.budgets = budgets or spec.budgets

    def seeds_of(self, system: System) -> List[int]:
        return system.seeds or self.seeds

    def budgets_of(self, system: System) -> List[Optional[str]]:
        return [None] if system.budget == "none" else list(system.budgets or self.budgets)

    def runs(self, data: str, systems: List[System]) -> List[Run]:
        return [
            Run(data, system, seed, budget)
            for system in systems for seed in self.seeds_of(system) for budget in self.budgets_of(system)
        ]

    def run_of(self, name: str, like: Run) -> Run:
        """System NAME's run for the same data, seed and budget ({model:NAME}): its first
        seed if it has its own seeds without this one, no budget if it has none."""
        system = self.spec.systems[name]
        seeds = self.seeds_of(system)
        seed = like.seed if like.seed in seeds or system.seeds is None else seeds[0]
        return Run(like.data, system, seed, None if system.budget == "none" else like.budget)
