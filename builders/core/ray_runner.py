"""The `ray` runner: a pool of `concurrency` Ray actors (each with `num_gpus` / `num_cpus`, one model
load each, spread over the nodes). This process, the driver, reads each pending shard (its files are
here), cuts it into chunks and sends them to one actor through Ray's object store, at most
`AHEAD_PER_ACTOR` shards per actor, so the input never sits whole in the object store; a shard is
written here as soon as all its chunks are back. The shard is the unit an actor works on: a pool
needs at least as many pending shards as actors to keep them all busy. A stage that runs several
calls (an evaluation: each model and image set) passes them one pool (RayPool), whose actors build
each call's worker in turn: Ray and its actors start once per stage run. No node ever opens the
stage's files, so the same code serves a driver that is a node, a Ray job's driver and a Ray client
(`ray://`) on a machine that is none. An actor whose process dies (a kill, an OOM, a lost node) is
restarted up to `max_restarts` times and the chunks it had in flight are retried up to
`max_task_retries` times; the stage log counts the restarts. What the actors load (models, an image
folder) they check first (`model_paths` of the worker class): a node without it is one line naming
the node and the path. A stall stops the run in one line (babelforge.core.ray_stall); connecting is
babelforge.core.ray_connect."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_connect import connect_ray
from babelforge.core.ray_log import ray_log_path, ray_output_to_log
from babelforge.core.ray_stall import STALL_POLL_S, stall_check, stall_message
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.shard_work import RunStats, chunks, concat, count_shard, from_ipc, read_input, to_ipc

# Shards in flight per actor: the one it works on and the next, already in the object store, so
# an actor never waits for the driver; more would only hold input in the object store.
AHEAD_PER_ACTOR = 2


def model_path(value: str) -> str:
    """A model setting as every node reads it: a path that exists here, absolute (an actor resolves
    a relative one from wherever its node was started); anything else (a Hub id, a URI) as given."""
    path = Path(value).expanduser()
    return str(path.resolve()) if path.exists() else value


def _node_name() -> str:
    """This process's node, as a line names it: its address and Ray node id (8 hex digits)."""
    import ray

    context = ray.get_runtime_context()
    return f"{ray.util.get_node_ip_address()} ({context.get_node_id()[:8]})"


class ChunkWorker:
    """The Ray actor: builds a stage's worker, then maps one chunk (Arrow IPC bytes of input rows) to
    the worker's output the same way, with the seconds the worker took on it (the shard's time in the
    progress log) and, from an actor Ray restarted after its process died, which restart it is (the
    actor's id and process id, empty otherwise: the driver counts the restarts).

    The worker comes with each chunk as a job (`job_id`, (worker class, args)) and is built when the
    job is new to this actor, the one before dropped first: one pool serves every model and image
    set of a stage run (RayPool), and a restarted actor builds it again from the chunk it is retried with.

    A worker class may list the files it loads (`model_paths(*args)`: absolute, model_path): they
    are checked first, so a node that lacks one says so in one line naming the node and the path.
    A constructor that fails is kept as that line and raised by every call of its job (a failed
    constructor would reach the driver only as a traceback in text)."""

    def __init__(self):
        import ray

        context = ray.get_runtime_context()
        restarted = context.was_current_actor_reconstructed
        self.restarted = f"{context.get_actor_id()}:{os.getpid()}" if restarted else ""
        self.job_id, self.worker, self.failure = None, None, ""

    def _build(self, job_id: str, worker: type, args: tuple) -> None:
        self.job_id, self.worker, self.failure = job_id, None, ""  # the last job's model goes before the next loads
        try:
            for path in getattr(worker, "model_paths", lambda *_: [])(*args):
                if not Path(path).exists():
                    raise BabelforgeError(
                        f"{path}: not on this node; every node needs the models at the same absolute path "
                        "(a shared volume or the nodes' image)"
                    )
            self.worker = worker(*args)
        except Exception as error:  # any kind: the driver gets it as one line
            text = str(error) if isinstance(error, BabelforgeError) else f"{type(error).__name__}: {error}"
            self.failure = f"ray: node {_node_name()}: {' '.join(text.split())[:600]}"

    def work(self, job_id: str, job: tuple[type, tuple], data: bytes) -> tuple[bytes, float, str]:
        if job_id != self.job_id:
            self._build(job_id, *job)
        if self.worker is None:
            raise BabelforgeError(self.failure)
        began = time.monotonic()
        output = to_ipc(self.worker(from_ipc(data)))
        return output, time.monotonic() - began, self.restarted


def _cause(error: BaseException | None) -> BabelforgeError | None:
    """The BabelforgeError a Ray task raised, found in the chain Ray wraps it in, if any (Ray's
    own error may itself be an instance of it, with a traceback for its text: the original
    exception is its `cause`)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        inner = getattr(error, "cause", None)
        if isinstance(inner, BaseException):
            error = inner
            continue
        if isinstance(error, BabelforgeError):
            return error
        error = error.__cause__ or error.__context__
    return None


def _actor_died(error: BaseException | None) -> bool:
    """Whether Ray's error says an actor's process died for good (its restarts or its chunk's
    retries used up), not that the worker's constructor failed (an error of its own, kept)."""
    from ray.exceptions import RayActorError

    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        for item in (error, getattr(error, "cause", None)):
            if isinstance(item, RayActorError):
                return not item.actor_init_failed
        error = error.__cause__ or error.__context__
    return False


# How long `RayPool.discard` lets actors still being created finish before it kills them.
CREATION_WAIT_S = 2.0


class RayPool:
    """The ray runner's connection and actor pool for one stage run: every `run_shards` of the run
    (each model and image set of an evaluation) hands its chunks to the same `concurrency` actors,
    which build that call's worker with its first chunk, so Ray and its actors start once per stage
    run, not once per call (eval_retrieval on the sample's 3 models x 2 caption sets started 6 pools:
    297 s on a local Ray, 87 s with one, 54-61 s local; on a two-node loopback cluster 148 s, 53 s with
    one, 29-31 s local; a loaded 2-core machine). Ray connects and the actors start at the first call
    with work to do; `close` (or the `with` block's end) frees the actors and shuts down a Ray it started."""

    def __init__(self, config: RunnerConfig):
        self.config = config
        self.actors: list = []
        self.connected = False
        self.started_ray = False
        self.starts = 0  # actor pools started: one a stage run, more only after a failed call discarded one
        self.restarted: set[str] = set()  # the actor restarts already counted
        self._jobs = 0

    def __enter__(self) -> RayPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def ready(self) -> list:
        """The pool's actors: Ray connected and the actors started on first use."""
        if not self.connected:
            self.started_ray = connect_ray(self.config)
            self.connected = True
        if not self.actors:
            self.actors = _actor_pool(self.config)
            self.starts += 1
        return self.actors

    def job(self, worker: type, args: tuple) -> tuple[str, Any]:
        """A new job for the actors: its id and (worker, args) in Ray's object store, put there once
        for all its chunks."""
        import ray

        self._jobs += 1
        return f"job-{self._jobs}", ray.put((worker, args))

    def discard(self) -> None:
        """Free the actors now (their resources go back to the cluster, not when this driver leaves)."""
        actors, self.actors = self.actors, []
        if not actors:
            return
        import ray

        # An actor killed while Ray is still creating it can leave the worker leased for it holding its CPU
        # (the worker logs "Mismatched ActorID: ignoring KillActor"; a later pool's actors then wait for a
        # CPU until the driver exits): the creation gets a moment to finish first. One that cannot be
        # placed is killed as it is, after the wait.
        with contextlib.suppress(Exception):  # a cluster already gone, an actor that died
            ray.wait(
                [actor.__ray_ready__.remote() for actor in actors], num_returns=len(actors), timeout=CREATION_WAIT_S
            )
        for actor in actors:
            with contextlib.suppress(Exception):  # a cluster already gone: nothing left to free
                ray.kill(actor, no_restart=True)

    def close(self) -> None:
        if not self.connected:
            return
        with ray_output_to_log():
            self.discard()
            if self.started_ray:
                import ray

                ray.shutdown()
        self.connected = self.started_ray = False


def _actor_pool(config: RunnerConfig) -> list:
    """`concurrency` ChunkWorker actors, spread over the nodes (one model copy per node first). An
    actor whose process dies is restarted (`max_restarts`) and the chunks it had in flight go to it
    again (`max_task_retries`); a chunk that kills every process it meets stops at those limits."""
    import ray

    resources: dict[str, Any] = {"num_cpus": config.num_cpus}
    if config.num_gpus:
        resources["num_gpus"] = config.num_gpus
    actor = ray.remote(ChunkWorker).options(
        max_restarts=config.max_restarts,
        max_task_retries=config.max_task_retries,
        scheduling_strategy="SPREAD",
        **resources,
    )
    return [actor.remote() for _ in range(config.concurrency)]


def run_ray(pending: list, worker, args, config, write, progress, pool: RayPool) -> RunStats:
    """The driver reads each shard (here, where its files are), cuts it into chunks and sends them
    to one actor through the object store, `AHEAD_PER_ACTOR` shards per actor at most; it writes a
    shard as soon as all its chunks are back. Under `ray://` the chunks travel from this machine to
    the cluster: no node ever opens this machine's files. The actors are `pool`'s: they build this
    worker with its first chunk; a run that fails discards them (the next run starts a new pool)."""
    stats = RunStats(started=time.monotonic())
    if not pending:
        return stats
    import ray

    completed = False
    try:
        with ray_output_to_log():
            actors = pool.ready()
            job_id, job = pool.job(worker, args)
            todo = iter(pending)
            load = [0] * len(actors)  # shards in flight per actor
            expected: dict[int, tuple[Any, int, int]] = {}  # shard index -> (shard, chunks, actor)
            in_flight: dict[Any, tuple[int, int]] = {}  # chunk's result -> (shard index, chunk number)
            arrived: dict[int, dict[int, Any]] = {}
            worked: dict[int, float] = {}  # the actor's seconds on each shard's chunks so far
            restarted = pool.restarted  # an actor's restart counts once in the stage run

            def feed() -> None:
                while min(load) < AHEAD_PER_ACTOR and (item := next(todo, None)) is not None:
                    shard, read = item
                    parts = chunks(read_input(shard, read), config.batch_size)
                    target = load.index(min(load))
                    load[target] += 1
                    expected[shard.index] = (shard, len(parts), target)
                    for number, part in enumerate(parts):
                        in_flight[actors[target].work.remote(job_id, job, to_ipc(part))] = (shard.index, number)

            def accept(result, value) -> None:
                """One chunk back: its shard written once all its chunks are."""
                index, number = in_flight.pop(result)
                data, seconds, restart = value
                if restart and restart not in restarted:
                    restarted.add(restart)
                    stats.actor_restarts += 1
                worked[index] = worked.get(index, 0.0) + seconds
                arrived.setdefault(index, {})[number] = from_ipc(data)
                shard, count, target = expected[index]
                if len(arrived[index]) == count:
                    parts = arrived.pop(index)
                    output = concat([parts[n] for n in range(count)])
                    write(shard, output)
                    count_shard(stats, shard, output, worked.pop(index), progress)
                    load[target] -= 1

            feed()
            last_back, slowest = time.monotonic(), 0.0  # the stall guard's clock and scale
            while in_flight:
                done, _ = ray.wait(list(in_flight), num_returns=1, timeout=STALL_POLL_S)
                if not done:
                    idle = time.monotonic() - last_back
                    if stalled := stall_check(idle, slowest, config):
                        kind, nodes, available = stalled
                        waiting = (len(in_flight), len({index for index, _ in in_flight.values()}))
                        line = stall_message(kind, idle, slowest, config, nodes, available, waiting, stats.shards)
                        raise BabelforgeError(line)
                    continue
                try:
                    value = ray.get(done[0])
                except Exception as error:
                    in_flight.pop(done[0])
                    _keep_what_came_back(in_flight, accept)
                    raise _ray_failure(error, config) from None
                accept(done[0], value)
                last_back, slowest = time.monotonic(), max(slowest, value[1])
                feed()
        stats.seconds = time.monotonic() - stats.started
        completed = True
        return stats
    finally:
        if not completed:  # a stall, a failed chunk, a stop: its chunks in flight are abandoned with its actors
            pool.discard()


# How long a failed run still waits for chunks already on their way back (the results of a dead
# actor's earlier chunks can arrive after the error of its later one).
LAST_RESULTS_WAIT_S = 2.0


def _keep_what_came_back(in_flight: dict, accept: Callable[[Any, Any], None]) -> None:
    """After a chunk failed: accept every other chunk whose result is back within
    `LAST_RESULTS_WAIT_S`, so each shard completed by them is written (and kept) before the stop."""
    import ray

    ready, _ = ray.wait(list(in_flight), num_returns=len(in_flight), timeout=LAST_RESULTS_WAIT_S)
    for result in [r for r in in_flight if r in set(ready)]:  # submission order: shards complete in turn
        try:
            value = ray.get(result)
        except Exception:  # a chunk lost with the same actor: its shard stays to do
            continue
        accept(result, value)


def _ray_failure(error: BaseException, config: RunnerConfig) -> BaseException:
    """The one line a chunk's failure stops the stage with: the worker's own error (its node named
    when its actor could not start), or an actor lost beyond the retry budget."""
    cause = _cause(error)
    if cause is not None:
        return BabelforgeError(str(cause))
    if _actor_died(error):
        return BabelforgeError(
            f"ray: a worker process died more often than max_restarts={config.max_restarts} and "
            f"max_task_retries={config.max_task_retries} allow (a lost node, a chunk that kills its process "
            f"every time, or memory: Ray's messages are in {ray_log_path()}); the shards written are kept"
        )
    return error
