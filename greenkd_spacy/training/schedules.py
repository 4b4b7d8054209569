"""Learning-rate schedules the papers use and thinc does not ship."""
from typing import Iterable

from thinc.api import registry


@registry.schedules("greenkd.exponential_decay.v1")
def exponential_decay(
    base_rate: float, decay: float = 0.75, decay_steps: int = 5000, *, t: int = 0
) -> Iterable[float]:
    """Yield base_rate * decay ** (t / decay_steps): Dozat & Manning's annealing
    (Table 7: 0.75^(t/5000))."""
    while True:
        yield base_rate * decay ** (t / decay_steps)
        t += 1
