"""The teacher pass: a corpus through a teacher into the teacher cache, shard by shard.

Distillation reads soft targets, not the teacher, and the teacher pass is the step that
outgrows one machine when the corpus does (the DAN paper distils on 10^7-10^8 docs).
The driver reads the corpus once, in the student's tokenization, and cuts it into
shards of `shard_size` examples; each unfinished shard becomes one task for a backend,
which runs the teacher once over it for every student component of the pipeline and
writes one shard file per component into that component's cache:

- ``local``: this process runs the shards one after another.
- ``ray``: Ray actors (``pip install greenkd-spacy[ray]``; see ray_backend.py), each
  a worker.py ShardWorker loading the teacher once and writing its shards into the cache directory, which must
  be a path every worker sees.

Workers write shard files atomically and return the file's checksum; only the driver
writes the manifest, after a shard has come back. A reader therefore never trusts a
shard the manifest does not vouch for, a rerun skips every shard the manifest lists,
and a shard lost with a killed worker is simply run again.
"""
import os
import shutil
import sys
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.training import Example
from thinc.api import Config
from tqdm import tqdm

from ..errors import Errors
from ..util import peak_rss_mb
from .cache import TeacherCache, shards
from .segmentation import check_shard_segmentation
from .worker import FAULT_ENV, AnnotationJob, PairJob, RecordMaker, Task, annotate_shard

BACKENDS = ("local", "ray")

# (student pipe, teacher pipe, cache) for each component the pass labels for
Pair = Tuple[Any, Any, TeacherCache]


def run_local(maker: RecordMaker, job: AnnotationJob, tasks: Iterator[Task], on_done: Callable[[Dict], None]) -> None:
    for index, first, examples in tasks:
        on_done(annotate_shard(maker, job.pair_jobs(), index, first, examples))


def pass_cost(
    wall: float,
    cpu: float,
    runs: Dict[str, Dict[str, Any]],
    run_id: str,
    legacy: List[Dict[str, Any]],
    labelled: List[Dict[str, Any]],
) -> Dict[str, Any]:
    """The cost of a whole teacher pass, however many runs it took.

    A pass that was interrupted and resumed is paid for by every run, but only the last
    reaches `mark_complete`. Each run therefore keeps its own running total in the
    manifest (`runs`: driver wall and CPU seconds since it started, workers' CPU
    included, updated as each of its shards lands), so an earlier run is counted up to
    its last finished shard: its start-up included, the shard it was killed in not.
    `runs` holds the earlier runs' records (this run's is `wall`/`cpu`). Shards written
    before runs were recorded (`legacy`, their manifest entries) are counted by their
    own labelling seconds; those without CPU seconds get this run's CPU/wall ratio over
    its own shards, and the result says how many were estimated.
    """
    cost: Dict[str, Any] = {"wall_seconds": wall, "cpu_seconds": cpu}
    earlier = {key: run for key, run in runs.items() if key != run_id}
    if not earlier and not legacy:
        return cost
    earlier_wall = sum(run["wall_seconds"] for run in earlier.values())
    earlier_cpu = sum(run["cpu_seconds"] for run in earlier.values())
    earlier_wall += sum(entry.get("seconds", 0.0) for entry in legacy)
    earlier_cpu += sum(entry["cpu_seconds"] for entry in legacy if "cpu_seconds" in entry)
    missing = [entry.get("seconds", 0.0) for entry in legacy if "cpu_seconds" not in entry]
    own_wall = sum(entry.get("seconds", 0.0) for entry in labelled)
    own_cpu = sum(entry.get("cpu_seconds", 0.0) for entry in labelled)
    ratio = own_cpu / own_wall if own_wall > 0 and own_cpu > 0 else None
    complete = True
    if missing:
        if ratio is not None:
            earlier_cpu += sum(missing) * ratio
        else:
            complete = False  # counted without those shards' CPU, and flagged
    cost["this_run"] = {"wall_seconds": wall, "cpu_seconds": cpu}
    cost["earlier_runs"] = {
        "runs": len(earlier),
        "shards_without_run_record": len(legacy),
        "wall_seconds": earlier_wall,
        "cpu_seconds": earlier_cpu,
        "cpu_estimated_shards": len(missing) if ratio is not None else 0,
        "cpu_per_wall_used": ratio if missing else None,
    }
    cost["wall_seconds"] = wall + earlier_wall
    cost["cpu_seconds"] = cpu + earlier_cpu
    cost["cpu_seconds_complete"] = complete
    return cost


# Headroom on the estimate: shards of later texts may be longer than the first.
DISK_MARGIN = 1.2


def check_disk_space(caches: List[TeacherCache], index: int, examples: int, remaining: int) -> None:
    """After the first shard a run writes: stop, before hours of labelling, if the rest
    of the corpus will not fit on the cache's disk at this shard's bytes per text.

    caches: The caches this pass fills (one shard file each for `index`).
    examples: The texts of shard `index`.
    remaining: Texts still to label after it.
    """
    if remaining <= 0 or examples <= 0:
        return
    needed: Dict[int, float] = {}  # per device
    free: Dict[int, Tuple[int, Path]] = {}
    for cache in caches:
        path = cache.shard_path(index)
        if not path.exists():
            continue
        device = os.stat(cache.directory).st_dev
        needed[device] = needed.get(device, 0.0) + path.stat().st_size / examples * remaining * DISK_MARGIN
        free[device] = (shutil.disk_usage(cache.directory).free, cache.directory)
    for device, bytes_needed in needed.items():
        available, directory = free[device]
        if bytes_needed > available:
            raise ValueError(Errors.E070.format(
                needed=bytes_needed / 1e9, remaining=remaining, per_text=bytes_needed / DISK_MARGIN / remaining / 1e3,
                directory=directory, free=available / 1e9,
            ))


def annotate(
    teacher: Language,
    pairs: List[Pair],
    examples: Iterable[Example],
    *,
    top_k: int,
    shard_size: int,
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
    """Stream the corpus through the teacher into the caches, shard by shard: one
    teacher pass for every (student pipe, teacher pipe, cache) of `pairs`.

    backend ("local" | "ray"): who labels the shards. "ray" needs `teacher_path` (the
        workers load the teacher themselves), `student_config`, and a cache directory
        that every worker can write to.
    workers (int): Ray actors to start (one CPU and `threads` torch threads each).
    address (Optional[str]): A running Ray cluster ("auto", "ray://head:10001"); None
        starts a local one with `workers` CPUs.
    RETURNS (Dict[str, Any]): Wall and CPU seconds of the whole pass (see
        `pass_cost`), docs, words labelled in this run, words/s, and how many docs
        earlier runs had already labelled.
    """
    if backend not in BACKENDS:
        raise ValueError(Errors.E036.format(backend=backend, backends=BACKENDS))
    pair_jobs = [
        PairJob(
            student_pipe=student_pipe.name,
            teacher_pipe=teacher_pipe.name,
            # The teacher's settings, and the run's DistillSettings (with what the
            # student decided about its teacher: soft or silver targets), for workers'
            # copies of the student, which are built from its config.
            student_cfg=dict(student_pipe.settings_from_teacher(teacher_pipe)),
            distill_settings=asdict(student_pipe.distill_settings),
            settings=dict(student_pipe.teacher_settings()),
            fingerprint=cache.fingerprint,
            directory=str(cache.directory),
        )
        for student_pipe, teacher_pipe, cache in pairs
    ]
    caches = [cache for _, _, cache in pairs]
    job = AnnotationJob(
        teacher=str(teacher_path or ""),
        student_config=student_config.to_str() if student_config is not None else "",
        pairs=[vars(pair) for pair in pair_jobs],
        top_k=top_k,
        batch_size=batch_size,
        threads=threads,
        env={k: v for k, v in os.environ.items() if k == FAULT_ENV or k == "HF_HUB_OFFLINE"},
    )
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    counts = {"shards": 0, "docs": 0, "done_before": 0, "words": 0, "examples": 0}
    warned_segmentation = False  # W008 is said once a pass
    run_id = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
    labelled: List[Dict[str, Any]] = []  # entries of the shards this run labels

    def run_cost() -> Dict[str, Any]:
        cpu = time.process_time() - start_cpu
        if backend == "ray":  # the workers' CPU is in their own processes
            cpu += sum(entry.get("cpu_seconds", 0.0) for entry in labelled)
        return {"wall_seconds": time.perf_counter() - start_wall, "cpu_seconds": cpu, "shards": len(labelled)}
    bar = tqdm(desc=f"teacher annotation ({backend})", unit="doc", total=total, file=stderr)

    def pending() -> Iterator[Task]:
        for index, shard in shards(examples, shard_size):
            counts["shards"] = index + 1
            counts["docs"] += len(shard)
            if all(cache.has_shard(index) for cache in caches):
                counts["done_before"] += len(shard)
                bar.update(len(shard))
                continue
            yield index, index * shard_size, shard

    def on_done(entry: Dict[str, Any]) -> None:
        nonlocal warned_segmentation
        index = entry.pop("index")
        entry["run"] = run_id
        labelled.append(entry)
        cost = run_cost()
        for cache, written in zip(caches, entry.pop("shards")):
            # This run's total so far goes into the same manifest write as its shard.
            cache.manifest.setdefault("runs", {})[run_id] = cost
            cache.add_shard(index, dict(entry, **written))
        counts["words"] += entry["words"]
        counts["examples"] += entry["examples"]
        if not warned_segmentation:
            warned_segmentation = check_shard_segmentation(entry.get("sentences"), index, entry["first_example"], entry["examples"])
        if total is not None and len(labelled) == 1:
            check_disk_space(caches, index, entry["examples"], total - counts["done_before"] - counts["examples"])
        bar.update(entry["examples"])
        elapsed = time.perf_counter() - start_wall
        bar.set_postfix({"words/s": f"{counts['words'] / max(elapsed, 1e-9):,.0f}"})

    try:
        if backend == "local":
            maker = RecordMaker(teacher, [(t, s) for s, t, _ in pairs], top_k, batch_size)
            run_local(maker, job, pending(), on_done)
        else:
            if not job.teacher or not job.student_config:
                raise ValueError(Errors.E038)
            from .ray_backend import run_ray

            run_ray(job, pending(), on_done, workers=workers, address=address)
    finally:
        bar.close()
    final = run_cost()
    wall = final["wall_seconds"]
    # Every run any of the caches recorded (one pass can fill several caches, and a
    # cache may hold shards of runs made for another set of components), and the
    # shards from before runs were recorded, each counted once.
    runs: Dict[str, Dict[str, Any]] = {}
    legacy: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
    for cache in caches:
        runs.update(cache.manifest.get("runs", {}))
        for entry in cache.manifest["shards"].values():
            if "run" not in entry:
                legacy[(entry.get("first_example"), entry.get("worker"), entry.get("seconds"))] = entry
    info = {
        "backend": backend,
        "workers": workers if backend == "ray" else 1,
        **pass_cost(wall, final["cpu_seconds"], runs, run_id, list(legacy.values()), labelled),
        "docs": counts["docs"],
        "docs_already_cached": counts["done_before"],
        "words_labelled": counts["words"],
        "words_per_second": counts["words"] / wall if wall > 0 else 0.0,
        # This process's peak (the teacher and the local worker; Ray workers not counted).
        "max_rss_mb": peak_rss_mb(),
    }
    info["components"] = [student_pipe.name for student_pipe, _, _ in pairs]
    for cache in caches:
        cache.mark_complete(counts["shards"], info)
    return info
