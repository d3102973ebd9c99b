"""`solar batch --engine ray`: the same workloads as the local engine, run by Ray actors on
a cluster (docs/pytorch.md, "Batch runs"), with results streamed back to the driver. The
driver writes them into the same JSON-lines file in the same format, so resume, the lock
and the summary are the local engine's.

Each actor is one worker slot, with `num_cpus=1` and optional memory set per actor so that
validation runs do not oversubscribe a node. It runs workloads exactly as the local engine
does (`workers.run_one`): in a warm child of its own zygote, or a fresh process with
`--workers cold`. So a crash, a hang or a leak of one workload stays in its process.

If an actor dies (its process killed, its node lost), its workload goes to a new actor
once. A workload whose actor dies twice is recorded as an error with stage `worker`. No
other workload is affected.

`address`: None starts a local cluster (`ray.init()`); "auto" joins the cluster this machine
belongs to; "ray://HOST:10001" is a remote cluster through Ray Client. Every node needs
Solar installed (the same version) and the workload files at the same paths, for instance
on a shared file system.
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path


def _actor_class(ray):
    @ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
    class BatchWorker:
        """One worker slot: a zygote of its own (warm), running one workload at a time."""

        def __init__(self, frameworks: list[str], workers: str):
            from solar.workers import Zygote, ZygoteGone, _Children

            os.environ["SOLAR_RAY_WORKER_PID"] = str(os.getpid())  # for tests and debugging
            zygote = None
            if workers == "warm":
                try:
                    zygote = Zygote(frameworks)
                except (ZygoteGone, OSError):
                    zygote = None  # cold processes, as the local engine falls back
            self.children = _Children(zygote)

        def run(self, path: str, arch: str, timeout: float, extra: list[str]):
            from solar.workers import run_one

            return run_one(Path(path), arch, timeout, extra, self.children)

        def pid(self) -> int:
            return os.getpid()

        def close(self) -> None:
            if self.children.zygote is not None:
                self.children.zygote.close()

    return BatchWorker


def ray_results(todo, arch, timeout, extra, jobs, workers, address, stream, memory=None):
    """Results of `todo` as Ray actors finish them (a generator, like batch.local_results)."""
    try:
        import ray
        from ray.exceptions import RayActorError
    except ImportError:
        from .errors import argument_error

        raise argument_error(
            "--engine ray needs Ray: pip install 'ray>=2.9' (docs/pytorch.md, Batch runs)"
        ) from None
    from .workers import frameworks_of

    started_here = not ray.is_initialized()
    if started_here:
        options = {"include_dashboard": False, "log_to_driver": False}
        if address is None:
            options["num_cpus"] = jobs
        start = time.perf_counter()
        ray.init(address=address, **options)
        # The cluster's fixed cost, apart from the workloads' (bench/bench_batch.py reads it).
        where = (
            f"started a local cluster of {jobs} CPUs" if address is None else f"joined {address}"
        )
        print(f"ray: {where} in {time.perf_counter() - start:.2f} s", file=stream)
    BatchWorker = _actor_class(ray)
    frameworks = frameworks_of(todo)

    def new_actor():
        opts = {"memory": memory} if memory else {}
        return BatchWorker.options(**opts).remote(frameworks, workers)

    queue = deque((str(f), 0) for f in todo)  # (workload, deaths of its actors so far)
    slots = max(1, min(jobs, len(queue)))
    actors = [new_actor() for _ in range(slots)]
    every = list(actors)
    running = {}  # ObjectRef -> (actor, workload, deaths)
    try:
        for actor in actors:
            if queue:
                path, deaths = queue.popleft()
                running[actor.run.remote(path, arch, timeout, extra)] = (actor, path, deaths)
        while running:
            finished, _ = ray.wait(list(running), num_returns=1)
            ref = finished[0]
            actor, path, deaths = running.pop(ref)
            try:
                yield ray.get(ref)
            except RayActorError:
                # The actor died with this workload: a new actor, and this workload once more.
                actor = new_actor()
                every.append(actor)
                if deaths == 0:
                    queue.appendleft((path, 1))
                else:
                    yield {
                        "source": path,
                        "status": "error",
                        "stage": "worker",
                        "message": "the Ray worker running it died twice",
                        "seconds_wall": 0.0,
                    }
            if queue:
                path, deaths = queue.popleft()
                running[actor.run.remote(path, arch, timeout, extra)] = (actor, path, deaths)
    finally:
        for actor in every:  # its zygote sees its stdin close and ends its workloads
            try:
                ray.kill(actor)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        if started_here:
            start = time.perf_counter()
            ray.shutdown()
            what = "stopped the local cluster" if address is None else "left the cluster"
            print(f"ray: {what} in {time.perf_counter() - start:.2f} s", file=stream)
