"""One worker of the teacher pass: load the teacher once, label shards, write them.

The local backend runs one in-process; the Ray backend runs one per actor. A worker
holds what the driver fingerprinted (AnnotationJob), builds the student component from
the student config to learn what a record holds, and writes each shard atomically; the
driver alone writes the manifest (annotate.py).
"""
import hashlib
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example
from thinc.api import Config

from ..atomic import atomic_write_bytes
from ..errors import Errors
from .adapters import distillable
from .cache import TeacherCache

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
        pipe = distillable(student.get_pipe(job.student_pipe))
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
