"""The teacher pass on Ray: actors label shards, Ray restarts the ones that die.

Why Ray (and actors rather than Ray Data or Dask): the expensive part of a worker is
loading the teacher, so a worker must live across many shards — an actor — and a dead
worker must come back and take its shard again, which Ray does itself with
`max_restarts` and `max_task_retries`. `ActorPool` hands shards to idle actors. We
schedule nothing ourselves: the driver only streams shards in (at most two per worker
in flight, so the corpus is never held in memory) and records the ones that come back.

Workers write their shards into the cache directory; on a cluster that directory must
be shared storage (NFS, a mounted bucket) at the same path on every node. See
docs/annotation.md.
"""
from typing import Any, Callable, Dict, Iterator, Optional

from ..errors import Errors
from .worker import AnnotationJob, ShardWorker, Task, encode_examples

MAX_RESTARTS = 3


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError(Errors.E039) from None
    return ray


def run_ray(
    job: AnnotationJob,
    tasks: Iterator[Task],
    on_done: Callable[[Dict[str, Any]], None],
    *,
    workers: int = 2,
    address: Optional[str] = None,
) -> None:
    """Label the pending shards with `workers` Ray actors.

    address (Optional[str]): A running cluster ("auto" or "ray://HOST:10001"); None
        starts a local Ray with `workers` CPUs and stops it afterwards.
    """
    ray = import_ray()
    from ray.util import ActorPool

    if workers < 1:
        raise ValueError(Errors.E040.format(workers=workers))
    started_here = not ray.is_initialized()
    if started_here:
        kwargs: Dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address is None:
            kwargs["num_cpus"] = workers
        ray.init(address=address, **kwargs)
    try:
        remote_worker = ray.remote(
            num_cpus=job.threads, max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS
        )(ShardWorker)
        actors = [remote_worker.remote(job.to_dict()) for _ in range(workers)]
        pool = ActorPool(actors)
        in_flight = 0
        for index, first, examples in tasks:
            if in_flight >= 2 * workers:
                on_done(pool.get_next_unordered())
                in_flight -= 1
            pool.submit(lambda actor, args: actor.annotate.remote(*args), (index, first, encode_examples(examples)))
            in_flight += 1
        while pool.has_next():
            on_done(pool.get_next_unordered())
        for actor in actors:
            ray.kill(actor)
    finally:
        if started_here:
            ray.shutdown()
