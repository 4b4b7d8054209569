"""One torch thread in every process forked from a process that has used torch.

`nlp.pipe(texts, n_process=N)` forks workers. A forked child inherits torch's
OpenMP thread pool in a broken state, and its first parallel op waits forever for
threads that do not exist in the child. PyTorch's own DataLoader workers avoid this
by running on one thread, and one thread per process is also what `n_process`
is for; so every child forked after this module is imported does the same.
"""
import os

import torch


def _one_thread_in_child() -> None:
    torch.set_num_threads(1)


if hasattr(os, "register_at_fork"):  # POSIX; spawned processes start fresh anyway
    os.register_at_fork(after_in_child=_one_thread_in_child)
