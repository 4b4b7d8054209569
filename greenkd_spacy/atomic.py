"""Writes that a kill cannot leave half done: files and whole directories.

Checkpoints, teacher-cache shards and benchmark results are read by later runs (a
resumed distillation, another student, the docs), so a reader must see either the old
version or the new one, never a torn file. Files are written to a temporary name in
the same directory and renamed over the target (one atomic rename on POSIX).
Directories (a spaCy pipeline, an LM checkpoint) take two renames, old out and new in;
`recover_directory` undoes a kill between the two.
"""
import gzip
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator

import srsly

from .errors import Errors


@contextmanager
def atomic_open(path: Path) -> Iterator[BinaryIO]:
    """A binary file that appears at ``path`` only when the block ends without error.

    For output too large to build in memory first (a transfer set of millions of
    sentences): written to a temporary file in the same directory, renamed at the end.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file_:
            yield file_
            file_.flush()
            os.fsync(file_.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_lines(path: Path, lines: Iterable[str]) -> int:
    """Write one line per string, gzipped if ``path`` ends in .gz, atomically; RETURNS
    the number of lines. The gzip header has no name and mtime 0, so the same lines
    give the same bytes."""
    count = 0
    with atomic_open(path) as raw:
        out = gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) if str(path).endswith(".gz") else raw
        for line in lines:
            out.write((line + "\n").encode("utf8"))
            count += 1
        if out is not raw:
            out.close()
    return count


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same directory, then rename over ``path``."""
    with atomic_open(path) as file_:
        file_.write(data)


def atomic_write_json(path: Path, data: Any, indent: int = 2) -> None:
    atomic_write_bytes(path, srsly.json_dumps(data, indent=indent).encode("utf8"))


def _old(path: Path) -> Path:
    return path.with_name(f".{path.name}.old")


def write_directory(path: Path, fill: Callable[[Path], None]) -> None:
    """Let ``fill`` write a fresh directory next to ``path``, then swap it in.

    A kill before the swap leaves ``path`` untouched; a kill between its two renames
    leaves the previous version at ``.NAME.old``, which `recover_directory` restores.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        fill(tmp)
    except BaseException:
        # A full disk or a kill while filling: no half-written folder is left behind,
        # and `path` is untouched.
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = _old(path)
    if path.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)


def recover_directory(path: Path) -> None:
    """If a run died between the two renames of `write_directory`, keep the old copy."""
    path = Path(path)
    old = _old(path)
    if not path.exists() and old.exists():
        os.replace(old, path)


def save_pipeline(nlp: Any, path: Path) -> None:
    """Save a pipeline whole or not at all (a fresh folder swapped in, as a checkpoint
    is): a full disk or a read-only directory leaves what `path` held before, and the
    error names the path."""
    try:
        write_directory(Path(path), nlp.to_disk)
    except OSError as err:
        raise ValueError(Errors.E068.format(path=path, error=f"{type(err).__name__}: {err}")) from err
