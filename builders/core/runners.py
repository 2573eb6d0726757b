"""Runners: the one way a sharded stage runs its per-shard work, here or on a Ray cluster.

A stage hands `run_shards` its pending shards, a reader for each (`input_reader(shard)`: a
picklable function of no arguments returning the shard's input rows: a shard file read back,
a slice of a listing), a worker *class* and the arguments to build it, and a
`write(shard, table)` callback. The worker's constructor loads its model once;
`worker(table) -> table` maps a chunk of input rows to output rows. Both runners cut every
shard into the same chunks of `batch_size` rows and hand the worker exactly those, so a worker
whose output depends on its batch (padding in a GPU kernel) gives the same bytes under either:

- `local`: one worker in this process, one shard after the other: read, work, write.
- `ray`: Ray Data. The pending shards are a datasource with one read task per shard, run on
  this node (where the stage's files are) and only as fast as the pipeline drains them: Ray
  Data's streaming executor holds back reads while the actors are busy, so the input never
  sits whole in the object store. Each shard's chunks are rows of the dataset, mapped by an
  actor pool (`map_batches` with the worker class: `concurrency` actors, each with `num_gpus` /
  `num_cpus`, one model load per actor); results stream back here (`iter_batches`), and a shard
  is written as soon as all its chunks are back. Ray Data hands a read task's output to one actor
  as one task (observed: every chunk of a shard on the same actor), so the shard is the unit an
  actor works on: a pool needs at least as many pending shards as actors to keep them all busy.
  Ray does the distribution, retries and back-pressure; nothing here schedules. An actor whose
  process dies (a kill, an OOM, a lost node) is restarted up to `max_restarts` times and the chunks
  it had in flight are retried up to `max_task_retries` times; the stage log counts the restarts.

This process always does the writing, so the shard directory (a DVC output) lives where the
stage runs, whichever machines did the work.
"""

from __future__ import annotations

import functools
import logging
import os
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from babelforge.core.config import setting
from babelforge.core.determinism import pinned_now
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, write_json
from babelforge.core.progress import ShardProgress, info
from babelforge.core.shards import pending_shards, remove_unplanned, write_shard

# Measured throughput is kept for plans (`babelforge captions_plan`) in a `.rates/` folder beside
# a stage's shard directories: never inside a DVC output (a timing would make identical runs differ).
RATES_DIR = ".rates"


@dataclass(frozen=True)
class RunnerConfig:
    """How a sharded stage runs (`<stage>.runner` in params.yaml)."""

    runner: Literal["local", "ray"] = setting("local", "local (this process) or ray (Ray Data actor pool)")
    shard_size: int = setting(
        {"sample": 1000, "full": 10000}, "input rows per shard: the unit written, checked and redone (and of memory)"
    )
    concurrency: int = setting(2, "ray: actors in the pool; each loads the model once")
    num_gpus: float = setting(
        {"sample": 0, "full": 1}, "ray: GPUs per actor (1 = one model per GPU; 0.5 packs two per GPU)"
    )
    num_cpus: float = setting(1.0, "ray: CPUs per actor")
    batch_size: int = setting(256, "input rows per worker call; both runners hand the worker the same chunks")
    address: str | None = setting(
        None, "ray: cluster address (auto, ray://head:10001); null: $RAY_ADDRESS, else a local Ray started here"
    )
    local_cpus: int | None = setting(None, "ray: CPUs of a local Ray started here (null: every core)")
    max_restarts: int = setting(3, "ray: restarts of an actor whose process died (-1: no limit, 0: none)")
    max_task_retries: int = setting(3, "ray: retries of a chunk whose actor died (-1: no limit, 0: none)")

    def __post_init__(self):
        if min(self.batch_size, self.concurrency, self.shard_size) < 1:
            raise BabelforgeError("runner: shard_size, batch_size and concurrency must be at least 1")
        if min(self.max_restarts, self.max_task_retries) < -1:
            raise BabelforgeError("runner: max_restarts and max_task_retries must be -1 (no limit) or more")


@dataclass
class RunStats:
    shards: int = 0
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0  # the whole run: model loads and (ray) actor start included
    started: float = 0.0  # time.monotonic() at the start
    first_done: float = 0.0  # ... when the first shard was written
    last_done: float = 0.0  # ... when the last one was
    first_rows_in: int = 0  # input rows of the first shard written
    actor_restarts: int = 0  # ray: restarted actors (a process that died, brought back) that went on working

    def steady_rate(self) -> float | None:
        """Input rows per second between the first and the last shard written: the throughput
        once every worker is up (None with fewer than two shards)."""
        if self.shards < 2 or self.last_done <= self.first_done:
            return None
        return (self.rows_in - self.first_rows_in) / (self.last_done - self.first_done)


# A shard's input: a picklable function of no arguments that reads its rows, wherever it runs.
InputReader = Callable[[], Any]


def chunk_count(rows: int, size: int) -> int:
    """How many chunks `chunks` cuts `rows` rows into (an empty shard is one empty chunk)."""
    return max(1, -(-rows // size))


def chunks(table, size: int) -> list:
    """The table cut into consecutive slices of `size` rows (the last one shorter); an empty
    table is one empty chunk, so every shard gets at least one worker call and is written."""
    return [table.slice(start, size) for start in range(0, max(table.num_rows, 1), size)]


def _concat(tables: list):
    import pyarrow as pa

    return pa.concat_tables(tables).combine_chunks() if len(tables) > 1 else tables[0]


def _read_input(shard, read: InputReader):
    """The shard's input rows, checked against the plan (a file changed since planning would
    otherwise give a shard whose manifest describes other rows)."""
    table = read()
    if table.num_rows != shard.rows:
        raise BabelforgeError(
            f"the input of {shard.name} has {table.num_rows} rows, the plan {shard.rows}: "
            "it changed during the run; run it again"
        )
    return table


def slice_reader(table) -> Callable[[Any], InputReader]:
    """`input_reader` over an in-memory table (a file listing, a test's rows): each shard's
    reader carries only its own rows (Arrow IPC bytes of the slice), not the whole table."""

    def reader(shard) -> InputReader:
        return functools.partial(_from_ipc, _to_ipc(table.slice(shard.start, shard.rows)))

    return reader


def run_shards(
    pending: Iterable[tuple[Any, InputReader]],
    worker: type,
    args: tuple,
    config: RunnerConfig,
    write: Callable[[Any, Any], None],
    progress=None,
) -> RunStats:
    """Run `worker(*args)` over every (Shard, reader of its input) of `pending`; `write(shard,
    output)` each shard as it completes; `progress.shard_done(name, rows, seconds)` after each."""
    if config.runner == "local":
        return _run_local(pending, worker, args, config, write, progress)
    if config.runner == "ray":
        return _run_ray(list(pending), worker, args, config, write, progress)
    raise BabelforgeError(f"runner {config.runner!r}: use local or ray")


def _run_local(pending, worker, args, config, write, progress) -> RunStats:
    stats = RunStats(started=time.monotonic())
    started = stats.started
    instance = None
    for shard, read in pending:
        if instance is None:  # the model loads only when there is work
            instance = worker(*args)
        began = time.monotonic()
        table = _read_input(shard, read)
        output = _concat([instance(chunk) for chunk in chunks(table, config.batch_size)])
        write(shard, output)
        _count(stats, shard, output, time.monotonic() - began, progress)
    stats.seconds = time.monotonic() - started
    return stats


def _count(stats: RunStats, shard, output, seconds: float, progress) -> None:
    """Count a written shard; `seconds`: the worker's time on it (the progress log's figure)."""
    now = time.monotonic()
    if not stats.shards:
        stats.first_done, stats.first_rows_in = now, shard.rows
    stats.last_done = now
    stats.shards += 1
    stats.rows_in += shard.rows
    stats.rows_out += output.num_rows
    if progress is not None:
        progress.shard_done(shard.name, output.num_rows, seconds)


# ---------------------------------------------------------------- ray


def _to_ipc(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _from_ipc(data: bytes):
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


def _chunk_rows(shard, read: InputReader, batch_size: int) -> list:
    """A Ray read task's blocks: the shard's input cut into chunks, a block of one row each
    (`shard`, `chunk`, `data`: Arrow IPC bytes of the chunk's rows), so every worker call gets
    one chunk, as under the local runner."""
    import pyarrow as pa

    return [
        pa.table(
            {
                "shard": pa.array([shard.index], pa.int64()),
                "chunk": pa.array([number], pa.int64()),
                "data": pa.array([_to_ipc(part)], pa.large_binary()),
            }
        )
        for number, part in enumerate(chunks(_read_input(shard, read), batch_size))
    ]


def _pending_source(pending: list, batch_size: int):
    """The pending shards as a Ray Data datasource: one read task per shard, on this node."""

    from ray.data import Datasource, ReadTask
    from ray.data.block import BlockMetadata

    class PendingShards(Datasource):
        @property
        def supports_distributed_reads(self) -> bool:
            return False  # the readers open this machine's files: Ray runs them on the driver's node

        def estimate_inmemory_data_size(self):
            return None

        def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
            return [
                ReadTask(
                    functools.partial(_chunk_rows, shard, read, batch_size),
                    BlockMetadata(
                        num_rows=chunk_count(shard.rows, batch_size), size_bytes=None, exec_stats=None, input_files=None
                    ),
                )
                for shard, read in pending
            ]

    return PendingShards()


class ChunkWorker:
    """The Ray actor: builds the stage's worker once, then maps chunk rows (`shard, chunk, data`:
    Arrow IPC bytes of the chunk's input rows) to rows holding the worker's output the same way,
    with the seconds the worker took on it (`seconds`: the shard's time in the progress log) and,
    from an actor Ray restarted after its process died, which restart it is (`restarted`: the
    actor's id and process id, empty otherwise: the driver counts the restarts)."""

    def __init__(self, worker: type, args: tuple):
        import ray

        context = ray.get_runtime_context()
        restarted = context.was_current_actor_reconstructed
        self.restarted = f"{context.get_actor_id()}:{os.getpid()}" if restarted else ""
        self.worker = worker(*args)

    def __call__(self, batch):
        import pyarrow as pa

        shards, numbers, data = (batch.column(name).to_pylist() for name in ("shard", "chunk", "data"))
        results, seconds = [], []
        for item in data:
            began = time.monotonic()
            results.append(_to_ipc(self.worker(_from_ipc(item))))
            seconds.append(time.monotonic() - began)
        return pa.table(
            {
                "shard": pa.array(shards, pa.int64()),
                "chunk": pa.array(numbers, pa.int64()),
                "data": pa.array(results, pa.large_binary()),
                "seconds": pa.array(seconds, pa.float64()),
                "restarted": pa.array([self.restarted] * len(results), pa.string()),
            }
        )


def ray_init_options(config: RunnerConfig, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`ray.init`'s arguments for `config`: an existing cluster (`config.address`, else
    $RAY_ADDRESS) gets this process's CPU pin (builders/core/determinism.py) as the job's
    environment, for every node's workers, whatever the cluster's own environment is (else a
    cluster gives other bytes than `local`). A local Ray started here inherits this process's
    environment, pin included, so it gets none: a job environment would keep Ray from handing
    the actors the worker processes it starts ahead (measured: actors up 2-3 s later). Its
    address is `local`: a new Ray, never the cluster an earlier `ray start` on this machine left
    as the default (Ray's own default for `ray.init()`, stale once that head is gone)."""

    env = os.environ if environ is None else environ
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    address = config.address or env.get("RAY_ADDRESS")
    if not address:
        return {**options, "address": "local", "num_cpus": config.local_cpus, "include_dashboard": False}
    pinned = pinned_now(env)
    return {**options, "address": address, **({"runtime_env": {"env_vars": pinned}} if pinned else {})}


# Ray's token file, under the home folder (where `ray start` and `ray get-auth-token --generate` write it).
RAY_TOKEN_FILE = Path(".ray") / "auth_token"


def ray_auth_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a client of an existing cluster adds to its environment for Ray's token authentication
    (on by default, since Ray 2.59, for the clusters `ray start` starts): `RAY_AUTH_MODE=token` when a
    token is at hand ($RAY_AUTH_TOKEN, the file $RAY_AUTH_TOKEN_PATH names, or ~/.ray/auth_token) and
    the mode is not set. Ray itself does this only for `address=auto`; with an address given it
    connects without the token and the cluster refuses it (`InvalidAuthToken`). Ray reads the token
    itself; it is never read, printed or logged here. A set `RAY_AUTH_MODE` (disabled, token) is kept."""

    env = os.environ if environ is None else environ
    if env.get("RAY_AUTH_MODE"):
        return {}
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    files = [Path(env["RAY_AUTH_TOKEN_PATH"])] if env.get("RAY_AUTH_TOKEN_PATH") else []
    if env.get("RAY_AUTH_TOKEN") or any(path.is_file() for path in [*files, home / RAY_TOKEN_FILE]):
        return {"RAY_AUTH_MODE": "token"}
    return {}


def _use_ray_auth(extra: Mapping[str, str]) -> None:
    """Put `extra` (ray_auth_environment) into this process's environment, where Ray reads it, and
    have Ray read its settings again, as ray.init does when it turns token mode on for a local Ray
    (Ray reads them once, at import: measured, a RAY_AUTH_MODE set after `import ray` alone is not
    seen and the cluster refuses the client)."""
    if not extra:
        return
    os.environ.update(extra)
    try:
        from ray._raylet import Config
    except ImportError:  # a Ray without it: the variable alone, read by a Ray not yet set up
        return
    Config.initialize("")


def _connection_failure(address: str, error: BaseException) -> str:
    """One line on why `ray.init(address=...)` failed: the token, or no cluster answering."""
    chain, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        chain.append(error)
        error = error.__cause__ or error.__context__
    # Ray puts the GCS client's error into its own error's text, not into the chain
    if any(type(item).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(item) for item in chain):
        mode = os.environ.get("RAY_AUTH_MODE", "")
        if mode.lower() == "token":
            problem = "refused this client's token (or it has none)"
        elif mode:
            problem = f"wants a token and RAY_AUTH_MODE={mode} here sends none (unset it)"
        else:
            problem = "wants a token and this client has none"
        return (
            f"ray: the cluster at {address} {problem}: give it the cluster's token (RAY_AUTH_TOKEN, a file "
            "named by RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token; `ray get-auth-token` on the head prints it) "
            "(docs/guides/ray-cluster.md)"
        )
    text = " ".join(str(chain[0]).split())
    host = address.rsplit(":", 1)[0].removeprefix("ray://").strip("[]")
    hint = ""
    if host in ("127.0.0.1", "localhost", "::1"):
        hint = (
            "; Ray reads a loopback address as this machine's network address: a head bound to "
            "127.0.0.1 (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head ...) needs "
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too"
        )
    return f"ray: no cluster answered at {address} ({text}){hint} (docs/guides/ray-cluster.md)"


def connect_ray(config: RunnerConfig) -> bool:
    """`ray.init` to `config.address` or $RAY_ADDRESS (with the cluster's token, if one is at hand:
    ray_auth_environment), else a local Ray (no dashboard). True when this call started Ray (the
    caller shuts it down again)."""
    try:
        import ray
    except ImportError:
        raise BabelforgeError("runner ray needs Ray: pip install -c constraints.txt '.[ray]'") from None
    if ray.is_initialized():
        return False
    options = ray_init_options(config)
    if options["address"] == "local":
        ray.init(**options)
        return True
    _use_ray_auth(ray_auth_environment())
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ray.exceptions.RayError) as error:
        raise BabelforgeError(_connection_failure(options["address"], error)) from None
    return True


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


def _run_ray(pending: list, worker, args, config, write, progress) -> RunStats:
    stats = RunStats(started=time.monotonic())
    if not pending:
        return stats
    import ray

    started_ray = connect_ray(config)
    try:
        import ray.data

        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        expected = {shard.index: (shard, chunk_count(shard.rows, config.batch_size)) for shard, _ in pending}
        resources: dict[str, Any] = {"num_cpus": config.num_cpus}
        if config.num_gpus:
            resources["num_gpus"] = config.num_gpus
        # Reads take no CPU slot of their own (a file read beside the actors) and one reader
        # per four actors keeps a pool fed: reading a shard takes a fraction of a second, working
        # on it minutes. More readers would only start more processes on this node.
        source = ray.data.read_datasource(
            _pending_source(pending, config.batch_size),
            num_cpus=0,
            concurrency=max(1, config.concurrency // 4),
            override_num_blocks=len(pending),
        )
        # An actor whose process dies is restarted (`max_restarts`, per actor) and the chunks it had
        # in flight go to it again (`max_task_retries`, per chunk): Ray Data's own default is no
        # limit, which would retry a chunk that kills every process it meets for ever.
        # (Ray 2.60 takes them only as `ray_remote_args`, which it calls deprecated, with no named
        # parameter yet: the warning is left out.)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
            mapped = source.map_batches(
                ChunkWorker,
                fn_constructor_args=(worker, args),
                compute=ray.data.ActorPoolStrategy(size=config.concurrency),
                batch_size=1,
                batch_format="pyarrow",
                max_restarts=config.max_restarts,
                max_task_retries=config.max_task_retries,
                **resources,
            )
        arrived: dict[int, dict[int, Any]] = {}
        worked: dict[int, float] = {}  # the actors' seconds on each shard's chunks so far
        restarted: set[str] = set()
        try:
            for batch in mapped.iter_batches(batch_size=None, batch_format="pyarrow"):
                names = ("shard", "chunk", "data", "seconds", "restarted")
                columns = (batch.column(name).to_pylist() for name in names)
                for index, number, data, seconds, restart in zip(*columns):
                    if restart and restart not in restarted:
                        restarted.add(restart)
                        stats.actor_restarts += 1
                    worked[index] = worked.get(index, 0.0) + seconds
                    arrived.setdefault(index, {})[number] = _from_ipc(data)
                    shard, count = expected[index]
                    if len(arrived[index]) == count:
                        parts = arrived.pop(index)
                        output = _concat([parts[n] for n in range(count)])
                        write(shard, output)
                        _count(stats, shard, output, worked.pop(index), progress)
        except Exception as error:
            cause = _cause(error)
            if cause is not None:
                raise BabelforgeError(str(cause)) from None
            if _actor_died(error):
                raise BabelforgeError(
                    f"ray: a worker process died more often than max_restarts={config.max_restarts} and "
                    f"max_task_retries={config.max_task_retries} allow (a chunk that kills its process "
                    "every time, or memory: see the Ray logs); the shards written are kept"
                ) from None
            raise
        if arrived:
            raise BabelforgeError(f"ray: shard(s) {sorted(arrived)} came back incomplete")
        stats.seconds = time.monotonic() - stats.started
        return stats
    finally:
        if started_ray:
            ray.shutdown()


# ---------------------------------------------------------------- a sharded stage, start to end


def run_sharded(
    directory: str | os.PathLike,
    plan: list,
    input_reader: Callable[[Any], InputReader],
    worker: type,
    args: tuple,
    config: RunnerConfig,
    params_hash: str,
    model_hash: str,
    sort_by: tuple[str, ...] | list[str],
    desc: str,
    provenance: dict | None = None,
) -> RunStats:
    """Bring the shard directory up to date with `plan`: drop shards the plan no longer has,
    keep the current ones, run the worker over the rest and write each as it completes.

    `input_reader(shard)` gives the shard's reader: a picklable function of no arguments that
    returns its input rows (a shard file of an upstream directory, `slice_reader` over a small
    table); a shard whose input no longer has the planned rows stops the run with an error.
    """

    removed = remove_unplanned(directory, plan)
    todo = pending_shards(directory, plan, params_hash, model_hash)
    info(
        f"{desc}: {len(plan)} shards, {len(plan) - len(todo)} current, {len(todo)} to do"
        + (f", {len(removed)} no longer planned removed" if removed else "")
        + (f" (runner {config.runner})" if todo else "")
    )

    def write(shard, table):
        write_shard(directory, shard, table, params_hash, model_hash, sort_by=sort_by, provenance=provenance)

    progress = ShardProgress(desc, len(plan), done=len(plan) - len(todo))
    try:
        stats = run_shards(((shard, input_reader(shard)) for shard in todo), worker, args, config, write, progress)
    finally:
        progress.close()
    if stats.actor_restarts:
        info(
            f"{desc}: ray restarted {stats.actor_restarts} actor(s) whose process died and retried "
            "the chunks they had in flight"
        )
    return stats


# ---------------------------------------------------------------- measured rates


def record_rate(directory: str | os.PathLike, stage: str, stats: RunStats, config: RunnerConfig, unit: str) -> None:
    """Keep this run's throughput (input rows per second) for the next plan of `stage`, in
    `directory/.rates/<stage>.json` (directory: the folder holding the stage's shard directories)."""

    if stats.rows_in == 0 or stats.seconds <= 0:
        return
    write_json(
        {
            "stage": stage,
            "runner": config.runner,
            "concurrency": config.concurrency if config.runner == "ray" else 1,
            "unit": unit,
            "rows_in": stats.rows_in,
            "rows_out": stats.rows_out,
            "seconds": round(stats.seconds, 3),
            "rows_in_per_second": stats.rows_in / stats.seconds,
            "steady_rows_in_per_second": stats.steady_rate(),
            "rows_out_per_input_row": stats.rows_out / stats.rows_in,
        },
        Path(directory) / RATES_DIR / f"{stage}.json",
    )


def measured_rate(directory: str | os.PathLike, stage: str) -> dict | None:
    """The throughput the last run of `stage` on this machine recorded, or None."""

    path = Path(directory) / RATES_DIR / f"{stage}.json"
    return read_json(path) if path.is_file() else None
