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
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

import spacy
import srsly
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Config

from ..atomic import atomic_write_bytes
from ..errors import Errors
from .adapters import distillable
from .hidden import adapter_from_settings
from .cache import TeacherCache
from .contract import DistillSettings
from .segmentation import add_counts, sentence_counts

# Fault injection for tests: "SHARD_INDEX:MARKER_PATH" makes the worker that gets that
# shard exit abruptly once (it creates MARKER_PATH first), as a killed machine would.
FAULT_ENV = "GREENKD_TEST_KILL_WORKER_AT_SHARD"


def load_teacher(teacher: Union[str, Path]) -> Language:
    try:
        return spacy.load(teacher)
    except (OSError, IOError, ValueError) as err:
        raise ValueError(Errors.E014.format(path=teacher, error=err)) from None


def _canonical(data: Any) -> Any:
    """JSON round trip, so settings compare equal across processes (tuples vs lists)."""
    return srsly.json_loads(srsly.json_dumps(data))


@dataclass
class PairJob:
    """One student component of the pass: what it learns from (teacher_pipe), its
    settings (student_cfg: labels), the fingerprinted target settings, the cache it
    writes to, and the run's DistillSettings as a dict (distill_settings: soft or silver
    targets decide what a record holds; none in cfg, so they travel apart)."""

    student_pipe: str
    teacher_pipe: str
    student_cfg: Dict[str, Any]
    settings: Dict[str, Any]
    fingerprint: str
    directory: str
    distill_settings: Dict[str, Any] = field(default_factory=dict)


@dataclass
class AnnotationJob:
    """Everything a worker needs to rebuild the driver's record maker.

    The student components decide what a record holds (`teacher_records`); a worker
    builds them from the student's config (no weights needed: records depend only on
    their settings and labels) and checks that their `teacher_settings()` equal the
    fingerprinted ones, so it cannot write records for another cache. One job covers
    every student component of a pipeline: the teacher runs once per shard for all.
    """

    teacher: str
    student_config: str
    pairs: List[Dict[str, Any]]
    top_k: int
    batch_size: int = 64
    threads: int = 1
    env: Dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    def pair_jobs(self) -> List[PairJob]:
        return [PairJob(**pair) for pair in self.pairs]


class RecordMaker:
    """Teacher + student components: examples in, per component one cache record per
    doc out. The teacher's pipeline runs once per batch up to its last component that
    teaches; each teaching component sees the docs as its own pipeline hands them to it
    (after every earlier component), exactly as when it teaches alone."""

    def __init__(
        self,
        teacher: Language,
        pairs: List[Tuple[Any, Any]],
        top_k: int,
        batch_size: int = 64,
        sort_by_length: bool = True,
    ):
        self.teacher = teacher
        self.pairs = pairs  # (teacher pipe, student pipe)
        self.top_k = top_k
        self.batch_size = batch_size
        # False only to measure what the sort saves (benchmarks/teacher_batch_order.py).
        self.sort_by_length = sort_by_length
        # How the teacher split the docs of the last `records` call into sentences
        # (segmentation.py): the shard entry's "sentences".
        self.sentences: Optional[Dict[str, int]] = None
        # The teacher's components write label ids hashed in the teacher's StringStore
        # (entity types, dependency labels, tags) onto docs of the student's vocab:
        # that vocab must be able to turn them back into strings.
        strings = self.vocab.strings
        for string in teacher.vocab.strings:
            strings.add(string)
        order = {name: i for i, name in enumerate(teacher.pipe_names)}
        for teacher_pipe, _ in pairs:
            if teacher_pipe.name not in order:
                raise ValueError(Errors.E015.format(teacher=teacher_pipe.name, student="?", available=teacher.pipe_names))
        self.last = max(order[teacher_pipe.name] for teacher_pipe, _ in pairs)

    @property
    def vocab(self):
        student_pipe = self.pairs[0][1]
        # An adapter (adapters.py) wraps a spaCy pipe, which holds the vocab.
        return student_pipe.vocab if hasattr(student_pipe, "vocab") else student_pipe.pipe.vocab

    @classmethod
    def from_job(cls, job: AnnotationJob) -> "RecordMaker":
        teacher = load_teacher(job.teacher)
        student = spacy.util.load_model_from_config(
            Config().from_str(job.student_config), auto_fill=True, validate=False
        )
        pairs = []
        for pair in job.pair_jobs():
            teacher_pipe = teacher.get_pipe(pair.teacher_pipe)
            student_pipe = student.get_pipe(pair.student_pipe)
            pipe = adapter_from_settings(student_pipe, pair.settings) or distillable(student_pipe, teacher_pipe)
            pipe.cfg.update(pair.student_cfg)
            pipe.set_distill_settings(DistillSettings(**pair.distill_settings))
            if _canonical(pipe.teacher_settings()) != _canonical(pair.settings):
                raise RuntimeError(Errors.E037.format(settings=pipe.teacher_settings(), expected=pair.settings))
            pairs.append((teacher_pipe, pipe))
        return cls(teacher, pairs, job.top_k, job.batch_size)

    def teacher_doc(self, doc: Doc) -> Doc:
        """A copy of a student's doc in the teacher's vocab: the teacher's static
        vectors (en_core_web_md's, say) are looked up in the doc's vocab, and the
        student's has none of them."""
        if doc.vocab is self.teacher.vocab:
            return doc.copy()
        return Doc(self.teacher.vocab).from_bytes(doc.to_bytes(exclude=["tensor", "user_data"]))

    def records(self, examples: List[Example]) -> List[Dict[str, Dict]]:
        """One dict of records per pair, in the pairs' order.

        The teacher sees the shard's docs shortest first: a transformer pads every
        batch to its longest doc, and in corpus order most of a batch's work went on
        padding (the MiniLM-L6 SST-2 teacher over 1,000 transfer sentences: 1.88x
        faster, one thread; benchmarks/teacher_batch_order.py). Records are keyed by their doc
        (targets.doc_key), so the order they are made in changes nothing a student
        reads; the sort is stable, so a shard's bytes stay the same from run to run."""
        out: List[Dict[str, Dict]] = [{} for _ in self.pairs]
        self.sentences = None
        if self.sort_by_length:
            examples = sorted(examples, key=lambda eg: len(eg.predicted))
        for b in range(0, len(examples), self.batch_size):
            batch = examples[b : b + self.batch_size]
            docs = [self.teacher_doc(eg.predicted) for eg in batch]
            for position, (name, proc) in enumerate(self.teacher.pipeline):
                # A head's records come from the docs its pipeline hands it; an
                # encoder's (hidden.py) from its own output, after it ran.
                here = [(i, pair) for i, pair in enumerate(self.pairs) if pair[0].name == name]
                after = [(i, pair) for i, pair in here if pair[1].reads_teacher_output]
                for i, (teacher_pipe, student_pipe) in here:
                    if not student_pipe.reads_teacher_output:
                        out[i].update(student_pipe.teacher_records(teacher_pipe, docs, batch, self.top_k))
                if position == self.last and not after:
                    break
                docs = list(proc.pipe(docs)) if hasattr(proc, "pipe") else [proc(doc) for doc in docs]
                for i, (teacher_pipe, student_pipe) in after:
                    out[i].update(student_pipe.teacher_records(teacher_pipe, docs, batch, self.top_k))
                if position == self.last:
                    break
            self.sentences = add_counts(self.sentences, sentence_counts(docs))
        return out


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
    maker: RecordMaker, pairs: List[PairJob], index: int, first: int, examples: List[Example]
) -> Dict[str, Any]:
    """Label one shard for every pair, write each pair's shard file atomically into its
    cache, and return the manifest entries (one per pair, in "shards")."""
    start, start_cpu = time.perf_counter(), time.process_time()
    _maybe_fail(index)
    written = []
    for pair, records in zip(pairs, maker.records(examples)):
        data = srsly.msgpack_dumps(records)
        atomic_write_bytes(TeacherCache.shard_file(Path(pair.directory), index), data)
        written.append({"rows": len(records), "sha256": hashlib.sha256(data).hexdigest(), "fingerprint": pair.fingerprint})
    return {
        "index": index,
        "first_example": first,
        "examples": len(examples),
        "words": sum(len(eg.predicted) for eg in examples),
        "seconds": time.perf_counter() - start,
        # This process's CPU over the shard (every torch thread): with the manifest's
        # wall seconds, what a resumed pass adds up for the shards earlier runs labelled.
        "cpu_seconds": time.process_time() - start_cpu,
        "worker": f"{os.uname().nodename}:{os.getpid()}",
        # The teacher's sentences in the shard (None: it sets no boundaries).
        "sentences": maker.sentences,
        "shards": written,
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
        return annotate_shard(self.maker, self.job.pair_jobs(), index, first, examples)


Task = Tuple[int, int, List[Example]]
