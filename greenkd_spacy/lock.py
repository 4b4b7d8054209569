"""One run at a time per directory: the lock `spacy distill` holds on its output
directory and, during the teacher pass, on the teacher cache.

Two runs into one output directory used to interleave: the second resumed from the
first's model-last while the first was still training, and both wrote the same
checkpoints and cache. The lock is an advisory `flock` on OUTPUT/.greenkd.lock, so the
operating system releases it when its holder dies, however it dies; the file names the
holder (pid, host, start time) for the message a second run stops with. A lock file
left by a dead holder is taken over, and said so.
"""
import contextlib
import datetime
import os
import socket
import sys
from pathlib import Path
from typing import IO, Iterator, Optional

from .errors import Errors

LOCK_FILE = ".greenkd.lock"

try:  # POSIX; elsewhere runs are not locked (said once per run)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def run_lock(directory: Path, what: str, stderr: Optional[IO] = None) -> Iterator[None]:
    """Hold the lock of `directory` (created if missing) for the body.

    directory (Path): The directory a run writes to.
    what (str): What the directory is to the run ("output directory", "teacher
        cache"), for the message.
    RAISES ValueError: E062 when another process holds it, naming that process.
    """
    stderr = stderr or sys.stderr
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ValueError(Errors.E063.format(what=what, path=directory)) from None
    except OSError as err:
        raise ValueError(Errors.E064.format(what=what, path=directory, error=err)) from None
    if fcntl is None:  # pragma: no cover
        stderr.write(f"Runs are not locked on this platform: start one run at a time in {directory}.\n")
        yield
        return
    path = directory / LOCK_FILE
    try:
        handle = open(path, "a+", encoding="utf8")
    except OSError as err:
        raise ValueError(Errors.E064.format(what=what, path=directory, error=err)) from None
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise ValueError(Errors.E062.format(what=what, path=directory, holder=holder)) from None
        handle.seek(0)
        previous = handle.read().strip()
        if previous:
            stderr.write(f"Took over the lock of {directory} from {previous}, which is no longer running.\n")
        handle.seek(0)
        handle.truncate()
        started = datetime.datetime.now().isoformat(timespec="seconds")
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, started {started}")
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()
