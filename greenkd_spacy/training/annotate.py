"""The teacher pass: a corpus through a teacher into the teacher cache, shard by shard.

Distillation reads soft targets, not the teacher, and the teacher pass is the step that
outgrows one machine when the corpus does (the DAN paper distils on 10^7-10^8 docs).
The driver reads the corpus once, in the student's tokenization, and cuts it into
shards of `shard_size` examples; each unfinished shard becomes one task for a backend:

- ``local``: this process runs the shards one after another.
- ``ray``: Ray actors (``pip install greenkd-spacy[ray]``; see ray_backend.py), each
  loading the teacher once and writing its shards into the cache directory, which must
  be a path every worker sees.

Workers write shard files atomically and return the file's checksum; only the driver
writes the manifest, after a shard has come back. A reader therefore never trusts a
shard the manifest does not vouch for, a rerun skips every shard the manifest lists,
and a shard lost with a killed worker is simply run again.
"""
import hashlib
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import Config
from tqdm import tqdm

from ..atomic import atomic_write_bytes
from ..errors import Errors
from .teacher_cache import TeacherCache, shards

BACKENDS = ("local", "ray")
# Fault injection for tests: "SHARD_INDEX:MARKER_PATH" makes the worker that gets that
# shard exit abruptly once (it creates MARKER_PATH first), as a killed machine would.
FAULT_ENV = "GREENKD_TEST_KILL_WORKER_AT_SHARD"


def load_teacher(teacher: Union[str, Path]) -> Language:
    try:
        return spacy.load(teacher)
    except (OSError, IOError, ValueError) as err:
        raise ValueError(Errors.E014.format(path=teacher, error=err)) from None


def teacher_docs(teacher: Language, teacher_name: str, docs: List[Any]) -> List[Any]:
    """Copies of the student docs, run through the teacher's components before the
    teacher component (e.g. its transformer, so listeners have their input)."""
    docs = [doc.copy() for doc in docs]
    for name, proc in teacher.pipeline:
        if name == teacher_name:
            break
        docs = list(proc.pipe(docs)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
    return docs


def _canonical(data: Any) -> Any:
    """JSON round trip, so settings compare equal across processes (tuples vs lists)."""
    return srsly.json_loads(srsly.json_dumps(data))


@dataclass
class AnnotationJob:
    """Everything a worker needs to rebuild the driver's record maker.

    The student component decides what a record holds (`teacher_records`); a worker
    builds that component from the student's config (no weights needed: records depend
    only on its settings and labels) and checks that its `teacher_settings()` equal the
    fingerprinted ones, so it cannot write records for another cache.
    """

    teacher: str
    teacher_pipe: str
    student_config: str
    student_pipe: str
    student_cfg: Dict[str, Any]
    settings: Dict[str, Any]
    fingerprint: str
    directory: str
    top_k: int
    batch_size: int = 64
    threads: int = 1
    env: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


class RecordMaker:
    """Teacher + student component: examples in, one cache record per doc out."""

    def __init__(self, teacher: Language, teacher_pipe: Any, student_pipe: Any, top_k: int, batch_size: int = 64):
        self.teacher = teacher
        self.teacher_pipe = teacher_pipe
        self.student_pipe = student_pipe
        self.top_k = top_k
        self.batch_size = batch_size

    @property
    def vocab(self):
        return self.student_pipe.vocab

    @classmethod
    def from_job(cls, job: AnnotationJob) -> "RecordMaker":
        teacher = load_teacher(job.teacher)
        student = spacy.util.load_model_from_config(
            Config().from_str(job.student_config), auto_fill=True, validate=False
        )
        pipe = student.get_pipe(job.student_pipe)
        pipe.cfg.update(job.student_cfg)
        if _canonical(pipe.teacher_settings()) != _canonical(job.settings):
            raise RuntimeError(Errors.E037.format(settings=pipe.teacher_settings(), expected=job.settings))
        return cls(teacher, teacher.get_pipe(job.teacher_pipe), pipe, job.top_k, job.batch_size)

    def records(self, examples: List[Example]) -> Dict[str, Dict]:
        records: Dict[str, Dict] = {}
        for b in range(0, len(examples), self.batch_size):
            batch = examples[b : b + self.batch_size]
            docs = teacher_docs(self.teacher, self.teacher_pipe.name, [eg.predicted for eg in batch])
            records.update(self.student_pipe.teacher_records(self.teacher_pipe, docs, batch, self.top_k))
        return records


def encode_examples(examples: Iterable[Example]) -> bytes:
    """A shard's examples as bytes (two DocBins), to ship to a worker."""
    predicted, reference = DocBin(store_user_data=False), DocBin(store_user_data=False)
    for eg in examples:
        predicted.add(eg.predicted)
        reference.add(eg.reference)
    return srsly.msgpack_dumps({"predicted": predicted.to_bytes(), "reference": reference.to_bytes()})


def decode_examples(data: bytes, vocab: Any) -> List[Example]:
    parts = srsly.msgpack_loads(data)
    predicted = DocBin().from_bytes(parts["predicted"]).get_docs(vocab)
    reference = DocBin().from_bytes(parts["reference"]).get_docs(vocab)
    return [Example(p, r) for p, r in zip(predicted, reference)]


def _maybe_fail(index: int) -> None:
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    target, marker = spec.split(":", 1)
    if int(target) == index and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)


def annotate_shard(
    maker: RecordMaker, directory: Union[str, Path], fingerprint: str, index: int, first: int, examples: List[Example]
) -> Dict[str, Any]:
    """Label one shard, write it atomically and return its manifest entry."""
    start = time.perf_counter()
    _maybe_fail(index)
    records = maker.records(examples)
    data = srsly.msgpack_dumps(records)
    path = TeacherCache.shard_file(Path(directory), index)
    atomic_write_bytes(path, data)
    return {
        "index": index,
        "first_example": first,
        "examples": len(examples),
        "rows": len(records),
        "words": sum(len(eg.predicted) for eg in examples),
        "sha256": hashlib.sha256(data).hexdigest(),
        "fingerprint": fingerprint,
        "seconds": time.perf_counter() - start,
        "worker": f"{os.uname().nodename}:{os.getpid()}",
    }


class ShardWorker:
    """One worker: loads the teacher once, then labels the shards it is given."""

    def __init__(self, job: Dict[str, Any]):
        self.job = AnnotationJob(**job)
        os.environ.update(self.job.env)
        try:
            import torch

            torch.set_num_threads(self.job.threads)
        except ImportError:  # pragma: no cover - torch is a dependency
            pass
        self.maker = RecordMaker.from_job(self.job)

    def annotate(self, index: int, first: int, payload: bytes) -> Dict[str, Any]:
        examples = decode_examples(payload, self.maker.vocab)
        return annotate_shard(self.maker, self.job.directory, self.job.fingerprint, index, first, examples)


Task = Tuple[int, int, List[Example]]


def run_local(maker: RecordMaker, job: AnnotationJob, tasks: Iterator[Task], on_done: Callable[[Dict], None]) -> None:
    for index, first, examples in tasks:
        on_done(annotate_shard(maker, job.directory, job.fingerprint, index, first, examples))


def annotate(
    teacher: Language,
    student_pipe: Any,
    teacher_pipe: Any,
    examples: Iterable[Example],
    cache: TeacherCache,
    *,
    top_k: int,
    shard_size: int,
    settings: Optional[Dict[str, Any]] = None,
    batch_size: int = 64,
    total: Optional[int] = None,
    backend: str = "local",
    workers: int = 1,
    address: Optional[str] = None,
    teacher_path: Optional[Union[str, Path]] = None,
    student_config: Optional[Config] = None,
    threads: int = 1,
    stderr: IO = sys.stderr,
) -> Dict[str, Any]:
    """Stream the corpus through the teacher into the cache, shard by shard.

    backend ("local" | "ray"): who labels the shards. "ray" needs `teacher_path` (the
        workers load the teacher themselves), `student_config`, and a cache directory
        that every worker can write to.
    workers (int): Ray actors to start (one CPU and `threads` torch threads each).
    address (Optional[str]): A running Ray cluster ("auto", "ray://head:10001"); None
        starts a local one with `workers` CPUs.
    RETURNS (Dict[str, Any]): Wall and CPU seconds of the driver, docs, words labelled
        in this run, words/s, and how many docs earlier runs had already labelled.
    """
    if backend not in BACKENDS:
        raise ValueError(Errors.E036.format(backend=backend, backends=BACKENDS))
    settings = dict(settings if settings is not None else student_pipe.teacher_settings())
    job = AnnotationJob(
        teacher=str(teacher_path or ""),
        teacher_pipe=teacher_pipe.name,
        student_config=student_config.to_str() if student_config is not None else "",
        student_pipe=student_pipe.name,
        student_cfg={k: student_pipe.cfg[k] for k in ("labels", "positive_label") if k in student_pipe.cfg},
        settings=settings,
        fingerprint=cache.fingerprint,
        directory=str(cache.directory),
        top_k=top_k,
        batch_size=batch_size,
        threads=threads,
        env={k: v for k, v in os.environ.items() if k == FAULT_ENV or k == "HF_HUB_OFFLINE"},
    )
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    counts = {"shards": 0, "docs": 0, "done_before": 0, "words": 0, "examples": 0}
    bar = tqdm(desc=f"teacher annotation ({backend})", unit="doc", total=total, file=stderr)

    def pending() -> Iterator[Task]:
        for index, shard in shards(examples, shard_size):
            counts["shards"] = index + 1
            counts["docs"] += len(shard)
            if cache.has_shard(index):
                counts["done_before"] += len(shard)
                bar.update(len(shard))
                continue
            yield index, index * shard_size, shard

    def on_done(entry: Dict[str, Any]) -> None:
        cache.add_shard(entry.pop("index"), entry)
        counts["words"] += entry["words"]
        counts["examples"] += entry["examples"]
        bar.update(entry["examples"])
        elapsed = time.perf_counter() - start_wall
        bar.set_postfix({"words/s": f"{counts['words'] / max(elapsed, 1e-9):,.0f}"})

    try:
        if backend == "local":
            maker = RecordMaker(teacher, teacher_pipe, student_pipe, top_k, batch_size)
            run_local(maker, job, pending(), on_done)
        else:
            if not job.teacher or not job.student_config:
                raise ValueError(Errors.E038)
            from .ray_backend import run_ray

            run_ray(job, pending(), on_done, workers=workers, address=address)
    finally:
        bar.close()
    wall = time.perf_counter() - start_wall
    info = {
        "backend": backend,
        "workers": workers if backend == "ray" else 1,
        "wall_seconds": wall,
        "cpu_seconds": time.process_time() - start_cpu,
        "docs": counts["docs"],
        "docs_already_cached": counts["done_before"],
        "words_labelled": counts["words"],
        "words_per_second": counts["words"] / wall if wall > 0 else 0.0,
    }
    cache.mark_complete(counts["shards"], info)
    return info
