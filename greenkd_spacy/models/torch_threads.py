"""How many threads greenkd's torch layers run on: one, unless the user says otherwise.

torch starts with one thread per core, spaCy's own components run on one. On a machine
with anything else running (a second training, the teacher pass of another run, a
web server's other workers), torch's threads wait for cores they do not get: the
parser of a distilled en_core_web_md student parsed 28,000-38,000 words/s on one
thread and 1,600-2,300 on two, on 2 cores beside one training (docs/reliability.md).
So every torch call of a greenkd layer (torch_bridge.AveragedPyTorchShim, forward and
backward) runs with `threads()` threads and gives torch its own setting back after:
nothing else in the process is changed. GREENKD_TORCH_THREADS sets the number (0:
torch's own setting, for a machine that is yours alone).

`nlp.pipe(texts, n_process=N)` forks workers. A forked child inherits torch's OpenMP
thread pool in a broken state, and its first parallel op waits forever for threads
that do not exist in the child; so every child forked after this module is imported
runs torch on one thread, as PyTorch's own DataLoader workers do.
"""
import contextlib
import os
from typing import Iterator, Optional

import torch

from ..errors import Errors

ENV = "GREENKD_TORCH_THREADS"


def threads() -> Optional[int]:
    """The threads greenkd's torch layers run on (None: torch's own setting)."""
    value = os.environ.get(ENV, "1").strip() or "1"
    try:
        n = int(value)
    except ValueError:
        raise ValueError(Errors.E069.format(env=ENV, value=value)) from None
    if n < 0:
        raise ValueError(Errors.E069.format(env=ENV, value=value))
    return n or None


@contextlib.contextmanager
def limited() -> Iterator[None]:
    """Run the block on `threads()` torch threads, then restore torch's setting."""
    n = threads()
    before = torch.get_num_threads()
    if n is None or n == before:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _one_thread_in_child() -> None:
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):  # POSIX; spawned processes start fresh anyway
    os.register_at_fork(after_in_child=_one_thread_in_child)
