"""Learning-rate schedules the papers use and thinc does not ship."""
import warnings
from typing import Iterable

from thinc.api import registry

from ..errors import Warnings
from .budget import budget_progress


@registry.schedules("greenkd.exponential_decay.v1")
def exponential_decay(
    base_rate: float, decay: float = 0.75, decay_steps: int = 5000, *, t: int = 0
) -> Iterable[float]:
    """Yield base_rate * decay ** (t / decay_steps): Dozat & Manning's annealing
    (Table 7: 0.75^(t/5000))."""
    while True:
        yield base_rate * decay ** (t / decay_steps)
        t += 1


@registry.schedules("greenkd.budget_decay.v1")
def budget_decay(
    base_rate: float, warmup_steps: int = 0, final_rate: float = 0.0, *, t: int = 0
) -> Iterable[float]:
    """Yield a rate that falls linearly from base_rate to final_rate as the run's time
    budget (greenkd.train_budget.v1) is spent, after warmup_steps of linear warm-up.

    Why: a run cut by a wall-clock budget ends wherever its step schedule happens to be;
    with a slow step decay the rate is still high at the last step, and the model has
    not settled (dev scores still climbing at the end). Tying the decay to the budget
    lets every run anneal by its end, whatever a step costs on the machine. Without a
    budget the rate stays at base_rate (W007).
    """
    warned = False
    while True:
        warm = min(1.0, (t + 1) / warmup_steps) if warmup_steps else 1.0
        progress = budget_progress()
        if progress is None:
            # The first value is read when the optimizer is built, which may come before
            # the run's budget callback: only a later step without one is warned of.
            if t > 0 and not warned:
                warnings.warn(Warnings.W007.format(rate=base_rate))
                warned = True
            rate = base_rate
        else:
            rate = final_rate + (base_rate - final_rate) * (1.0 - progress)
        yield rate * warm
        t += 1
