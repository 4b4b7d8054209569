"""How many threads greenkd's torch layers run on: one to annotate, torch's own
setting to train, unless the user says otherwise.

torch starts with one thread per core, spaCy's own components run on one. Annotating
on a machine with anything else running (a training, a teacher pass, a web server's
other workers), torch's threads wait for cores they do not get: the parser of a
distilled en_core_web_md student parsed 28,000-38,000 words/s on one thread and
1,600-2,300 on two, on 2 cores beside one training (docs/reliability.md). So every
inference call of a greenkd torch layer (torch_bridge.AveragedPyTorchShim) runs on one
thread and gives torch its own setting back after: nothing else in the process is
changed. A training is the one job of its machine as a rule, and there it keeps torch's
own setting (on 2 cores, the default parser pipeline made 1,178 steps in 10 EWT minutes
with torch's two threads and 1,063 with one). GREENKD_TORCH_THREADS=N runs both on N
threads (0: torch's own setting).

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


def threads(is_train: bool = False) -> Optional[int]:
    """The threads greenkd's torch layers run on (None: torch's own setting)."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None if is_train else 1
    try:
        n = int(value)
    except ValueError:
        raise ValueError(Errors.E069.format(env=ENV, value=value)) from None
    if n < 0:
        raise ValueError(Errors.E069.format(env=ENV, value=value))
    return n or None


@contextlib.contextmanager
def limited(is_train: bool = False) -> Iterator[None]:
    """Run the block on `threads(is_train)` torch threads, then restore torch's setting."""
    n = threads(is_train)
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
