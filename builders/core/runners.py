"""Runners: the one way a sharded stage runs its per-shard work, here or on a Ray cluster.

A stage hands `run_shards` its pending shards, a reader for each (`input_reader(shard)`: a
picklable function of no arguments returning the shard's input rows: a shard file read back,
a slice of a listing), a worker *class* and the arguments to build it, and a
`write(shard, table)` callback. The worker's constructor loads its model once;
`worker(table) -> table` maps a chunk of input rows to output rows. Both runners cut every
shard into the same chunks of `batch_size` rows and hand the worker exactly those, so a worker
whose output depends on its batch (padding in a GPU kernel) gives the same bytes under either:

- `local`: one worker in this process, one shard after the other: read, work, write.
- `ray`: a pool of `concurrency` Ray actors (each with `num_gpus` / `num_cpus`, one model load
  each, spread over the nodes). This process, the driver, reads each pending shard (its files are
  here), cuts it into chunks and sends them to one actor through Ray's object store, at most
  `AHEAD_PER_ACTOR` shards per actor, so the input never sits whole in the object store; a shard
  is written here as soon as all its chunks are back. The shard is the unit an actor works on: a
  pool needs at least as many pending shards as actors to keep them all busy. A stage that runs
  several calls (an evaluation: each model and image set) passes them one pool (RayPool), whose
  actors build each call's worker in turn: Ray and its actors start once per stage run. No node ever opens
  the stage's files, so the same code serves a driver that is a node, a Ray job's driver and a
  Ray client (`ray://`) on a machine that is none. An actor whose process dies (a kill, an OOM, a
  lost node) is restarted up to `max_restarts` times and the chunks it had in flight are retried
  up to `max_task_retries` times; the stage log counts the restarts. What the actors load (models,
  an image folder) they check first (`model_paths` of the worker class): a node without it is one
  line naming the node and the path. The driver never waits forever (the stall guard): a pool the
  live nodes can no longer hold (an actor restarted after its node was lost, every other CPU
  taken) stops once its chunks stop coming back, and any pool stops after `stall_floor` seconds,
  or `stall_factor` times the slowest chunk if longer, with no chunk back; one line says what is
  pending and what the cluster has, and the shards written are kept for the rerun.

This process always does the writing, so the shard directory (a DVC output) lives where the
stage runs, whichever machines did the work. Connecting to a cluster fails fast, in one line: the
address is asked first whether it answers (`connect_timeout`), is Ray (something else answering
there is one line at once: check_ray_address) and takes the token; Ray's own
messages go to a log file (ray_log_path), the terminal keeps the stage's lines.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from babelforge.core.config import setting
from babelforge.core.determinism import pinned_now
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, write_json
from babelforge.core.progress import ShardProgress, info, lines_to
from babelforge.core.shards import pending_shards, remove_unplanned, write_shard

# Measured throughput is kept for plans (`babelforge captions_plan`) in a `.rates/` folder beside
# a stage's shard directories: never inside a DVC output (a timing would make identical runs differ).
RATES_DIR = ".rates"


@dataclass(frozen=True)
class RunnerConfig:
    """How a sharded stage runs (`<stage>.runner` in params.yaml)."""

    runner: Literal["local", "ray"] = setting("local", "local (this process) or ray (a Ray actor pool)")
    # in the full profile too: 1,000 captions x 10 targets x the paper's 25 hypotheses = 250,000 hypothesis rows a
    # shard, and captions_select holds one shard at a time at ~3.6 KB a row (benchmarks/full_rehearsal.py: 277 MB at
    # 40,000 rows, 846 MB at 200,000), ~1 GB; the 10,000 captions it had in full made ~9 GB
    shard_size: int = setting(
        1000, "input rows per shard: the unit written, checked and redone (and of memory)", minimum=1
    )
    concurrency: int = setting(2, "ray: actors in the pool; each loads the model once", minimum=1)
    num_gpus: float = setting(
        {"sample": 0, "full": 1}, "ray: GPUs per actor (1 = one model per GPU; 0.5 packs two per GPU)", minimum=0
    )
    num_cpus: float = setting(1.0, "ray: CPUs per actor", minimum=0)
    batch_size: int = setting(
        256, "input rows per worker call; both runners hand the worker the same chunks", minimum=1
    )
    address: str | None = setting(
        None, "ray: cluster address (auto, ray://head:10001); null: $RAY_ADDRESS, else a local Ray started here"
    )
    connect_timeout: float = setting(
        20.0,
        "ray: seconds a cluster (address, $RAY_ADDRESS) has to answer before the stage stops with one line",
        above=0,
    )
    local_cpus: int | None = setting(None, "ray: CPUs of a local Ray started here (null: every core)", minimum=1)
    max_restarts: int = setting(3, "ray: restarts of an actor whose process died (-1: no limit, 0: none)", minimum=-1)
    max_task_retries: int = setting(3, "ray: retries of a chunk whose actor died (-1: no limit, 0: none)", minimum=-1)
    # a stall is stopped, never waited out: a pool the live nodes cannot hold stops once the chunks stop coming
    # (stall_guard); any pool stops after this long with no chunk back
    stall_factor: float = setting(
        20.0,
        "ray: the stage stops when no chunk has come back for this many times the slowest chunk so far",
        minimum=1,
    )
    stall_floor: float = setting(
        900.0,
        "ray: seconds with no chunk back the stage always allows (model loads before the first chunk included)",
        above=0,
    )

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
    pool: RayPool | None = None,
) -> RunStats:
    """Run `worker(*args)` over every (Shard, reader of its input) of `pending`; `write(shard,
    output)` each shard as it completes; `progress.shard_done(name, rows, seconds)` after each.
    `pool`: the ray runner's RayPool of the stage run (its actors build this worker in turn); without
    one, a pool of this call's own, closed at its end. The local runner takes none."""
    if config.runner == "local":
        return _run_local(pending, worker, args, config, write, progress)
    if config.runner == "ray":
        if pool is not None:
            return _run_ray(list(pending), worker, args, config, write, progress, pool)
        with RayPool(config) as own:
            return _run_ray(list(pending), worker, args, config, write, progress, own)
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
        output = _to_ipc(self.worker(_from_ipc(data)))
        return output, time.monotonic() - began, self.restarted


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
    return f"ray: no cluster answered at {address} ({text}){_loopback_hint(host)} (docs/guides/ray-cluster.md)"


def _loopback_hint(host: str) -> str:
    """What to set when a loopback head is asked for without the variable its head was started with."""
    if host not in ("127.0.0.1", "localhost", "::1") or os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") == "0":
        return ""
    return (
        "; Ray reads a loopback address as this machine's network address: a head bound to "
        "127.0.0.1 (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 ray start --head ...) needs "
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 here too"
    )


@functools.cache
def ray_log_path() -> Path:
    """Where Ray's own messages go while this run (this process) connects to Ray and runs on it: a
    file of its own (user, start time, process id), so two runs of a user never mix their lines."""
    started = time.strftime("%Y%m%dT%H%M%S")
    return Path(tempfile.gettempdir()) / f"babelforge-ray-{os.getuid()}-{started}-{os.getpid()}.log"


_output_redirected = 0  # ray_output_to_log's depth: the outermost one redirects
_log_announced: set[Path] = set()  # the Ray log this run has named on the terminal already


@contextlib.contextmanager
def ray_output_to_log():
    """Send what Ray writes to this process's stderr (its C++ core's log lines, its loggers' warnings,
    a lost node's dump) to ray_log_path() while the stage talks to Ray, and keep the stage's own
    lines (progress.info, its bars) on the terminal (when sys.stderr is the real stderr; a test's
    captured stderr keeps them)."""
    global _output_redirected
    if _output_redirected:
        yield
        return
    previous = sys.stderr
    swap = previous is sys.__stderr__ and previous is not None
    if previous is not None:
        previous.flush()
    log = os.open(ray_log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    terminal = os.dup(2)
    os.dup2(log, 2)
    os.close(log)
    stage = (
        open(os.dup(terminal), "w", buffering=1, encoding=previous.encoding, errors=previous.errors) if swap else None
    )
    _output_redirected += 1
    try:
        with lines_to(stage) if stage else contextlib.nullcontext():
            yield
    finally:
        _output_redirected -= 1
        if stage:
            stage.close()
        if previous is not None:
            previous.flush()
        os.dup2(terminal, 2)
        os.close(terminal)


def _endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) a cluster address names (a Ray client server for `ray://`, else the head's GCS),
    None for `auto` (a cluster of this machine, found by Ray)."""
    if address == "auto":
        return None
    client = address.startswith("ray://")
    rest = address.removeprefix("ray://").split("/", 1)[0]
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit():
        host, port = rest, "10001" if client else "6379"
    return host.strip("[]"), int(port)


def _silence(address: str, host: str, port: int, timeout: float) -> str | None:
    """Why nothing at `address` accepted a connection within `timeout` seconds (None: something did)."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as error:
        waited = isinstance(error, TimeoutError)
        reason = f"nothing within {timeout:g} s" if waited else (error.strerror or str(error) or "refused").lower()
    return f"ray: no cluster answered at {address} ({reason}){_loopback_hint(host)} (docs/guides/ray-cluster.md)"


# What a gRPC client (Ray's GCS and client server speak gRPC) sends first: HTTP/2's connection
# preface and an empty SETTINGS frame. A gRPC server answers with its own SETTINGS frame at once.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
# How long the first bytes of an answer are waited for: a server that is not Ray answers at once; one
# that answers nothing in this time is left to the Ray question (`_token_problem`, connect_timeout).
FIRST_ANSWER_S = 1.0


def foreign_answer(first: bytes) -> str | None:
    """What answered an HTTP/2 preface, when it is not an HTTP/2 (gRPC) server: the start of its
    answer as one printable line (an HTML page's text without its tags); None for an HTTP/2 SETTINGS
    frame (its 9-byte header: length, type 4, flags, stream 0) or for no answer at all (nothing to judge)."""
    if not first or (len(first) >= 9 and first[3] == 4 and first[5:9] == bytes(4)):
        return None
    text = re.sub(r"<[^>]*>", " ", first.decode("latin-1"))
    text = " ".join("".join(char if char.isprintable() or char.isspace() else "?" for char in text).split())
    return text[:100] or f"{len(first)} bytes that are not HTTP/2"


def _not_ray(address: str, host: str, port: int, timeout: float) -> str | None:
    """The one line when what listens at `address` answers a gRPC client's first bytes with
    something else (a web server's `505`): known in milliseconds, where Ray's clients retry until
    `connect_timeout`. Skipped under TLS (RAY_USE_TLS), where the first answer is TLS's."""
    if os.environ.get("RAY_USE_TLS", "").lower() in ("1", "true"):
        return None
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            connection.sendall(HTTP2_PREFACE)
            connection.settimeout(min(timeout, FIRST_ANSWER_S))
            first = connection.recv(1024)
    except OSError:  # no answer in time, or the line dropped: the Ray question decides
        return None
    answer = foreign_answer(first)
    if answer is None:
        return None
    return (
        f"ray: no cluster answered at {address}: something that is not Ray answers there ({answer!r}); "
        "check the address and port (the head's GCS, 6379 by default, or ray://<head>:10001) "
        "(docs/guides/ray-cluster.md)"
    )


def _token_problem(address: str, host: str, port: int, timeout: float) -> str | None:
    """Ask the cluster once whether it takes this client's token (a second, where ray.init retries
    for 20-30 s behind a screen of warnings before it says so); the one line if it does not, or if
    what listens there gives no Ray answer within `timeout` (Ray's own clients retry for 14-42 s:
    the question runs in a thread of its own, left behind when the stage stops)."""
    answer: list[str | None] = []
    asking = threading.Thread(target=lambda: answer.append(_ask_token(address, host, port, timeout)), daemon=True)
    asking.start()
    asking.join(timeout)
    if not answer:
        return (
            f"ray: no cluster answered at {address} within {timeout:g} s (the port is open, but no Ray "
            "answered there) (docs/guides/ray-cluster.md)"
        )
    return answer[0]


def _ask_token(address: str, host: str, port: int, timeout: float) -> str | None:
    try:
        if address.startswith("ray://"):
            # gRPC as Ray's client uses it (ray[client] installs it; named through Ray, which owns it)
            from ray._private.grpc_utils import grpc, init_grpc_channel
            from ray.core.generated import ray_client_pb2, ray_client_pb2_grpc

            channel = init_grpc_channel(f"{host}:{port}", options=[], asynchronous=False)
            try:
                grpc.channel_ready_future(channel).result(timeout=timeout)
                ping = ray_client_pb2.ClusterInfoRequest(type=ray_client_pb2.ClusterInfoType.PING)
                ray_client_pb2_grpc.RayletDriverStub(channel).ClusterInfo(ping, timeout=timeout)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    return _connection_failure(address, RuntimeError("InvalidAuthToken"))
                return f"ray: no Ray client server answered at {address} ({_first_line(error.details() or error.code().name)}) (docs/guides/ray-cluster.md)"
            except grpc.FutureTimeoutError:
                return (
                    f"ray: no Ray client server answered at {address} within {timeout:g} s (docs/guides/ray-cluster.md)"
                )
            finally:
                channel.close()
        else:
            from ray._raylet import GcsClient

            GcsClient(address=f"{host}:{port}").internal_kv_get(b"babelforge-probe", None, timeout=timeout)
    except Exception as error:
        if type(error).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(error):
            return _connection_failure(address, error)
        return f"ray: no cluster answered at {address} ({_first_line(str(error) or type(error).__name__)}) (docs/guides/ray-cluster.md)"
    return None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:300]


def _no_local_node(address: str) -> str | None:
    """A GCS address (head:6379) makes this process a driver on a node of this machine: the line
    saying so when this machine runs none (Ray would look for one for 60 s)."""
    from ray._private.services import find_node_ids

    if address.startswith("ray://") or find_node_ids():
        return None
    return (
        f"ray: this machine runs no node of the cluster at {address}; from a machine that is not a node connect "
        "through the Ray client (RAY_ADDRESS=ray://<head>:10001) or submit the stage as a Ray job "
        "(docs/guides/ray-cluster.md)"
    )


def check_ray_address(config: RunnerConfig) -> None:
    """Ask the cluster Ray would connect to (`config.address`, else $RAY_ADDRESS; nothing for a local
    Ray) whether it answers, is Ray and takes the token (ray_auth_environment): one line when not.
    connect_ray asks first; a stage that loads a model before its runner connects asks before it
    loads, so a wrong address stops it in seconds, not after the model."""
    address = ray_init_options(config)["address"]
    endpoint = None if address == "local" else _endpoint(address)
    if endpoint is None:
        return
    try:
        import ray  # noqa: F401  (the token question and the node lookup use Ray's own clients)
    except ImportError:
        raise BabelforgeError("runner ray needs Ray: pip install -c constraints.txt '.[ray]'") from None
    with ray_output_to_log():
        _use_ray_auth(ray_auth_environment())
        timeout = config.connect_timeout
        problem = (
            _silence(address, *endpoint, timeout)
            or _not_ray(address, *endpoint, timeout)
            or _token_problem(address, *endpoint, timeout)
            or _no_local_node(address)
        )
    if problem:
        raise BabelforgeError(problem)


def connect_ray(config: RunnerConfig) -> bool:
    """`ray.init` to `config.address` or $RAY_ADDRESS (with the cluster's token, if one is at hand:
    ray_auth_environment), else a local Ray (no dashboard). True when this call started Ray (the
    caller shuts it down again). A cluster is asked first whether it answers (within
    `connect_timeout`) and takes the token, so either failure is one line in seconds; Ray's own
    messages go to ray_log_path()."""
    try:
        import ray
    except ImportError:
        raise BabelforgeError("runner ray needs Ray: pip install -c constraints.txt '.[ray]'") from None
    if ray.is_initialized():
        return False
    options = ray_init_options(config)
    with ray_output_to_log():
        if options["address"] == "local":
            ray.init(**options)
            return True
        check_ray_address(config)
        address = options["address"]
        for attempt in range(1, CLIENT_SERVER_TRIES + 1):
            try:
                ray.init(**options)
                break
            except (ConnectionError, RuntimeError, ray.exceptions.RayError) as error:
                if not (address.startswith("ray://") and _server_not_started(error)) or attempt == CLIENT_SERVER_TRIES:
                    raise BabelforgeError(_connection_failure(address, error)) from None
                ray.shutdown()
                info(
                    f"ray: the head could not start a Ray client server for this stage; trying again ({attempt + 1}/{CLIENT_SERVER_TRIES})"
                )
    return True


# Ray 2.60's client proxy sometimes loses the server it starts for a client (the process dies as it
# forks beside gRPC's threads: seen in 2 of about 10 connections on a busy 2-core machine); the next
# try gets a new one.
CLIENT_SERVER_TRIES = 3


def _server_not_started(error: BaseException) -> bool:
    text = str(error)
    return "Initialization failure from server" in text or "Starting Ray client server failed" in text


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


# How often the driver looks up from its wait for chunks, to tell slow work from a stall.
STALL_POLL_S = 1.0
# A pool the live nodes cannot hold (an actor restarted after its node was lost, with every other
# CPU taken) stops after this long with no chunk back, or twice the slowest chunk if that is longer
# (a chunk still in progress on a live actor comes back first).
UNPLACEABLE_GRACE_S = 10.0


def actor_need(config: RunnerConfig) -> dict[str, float]:
    """The resources one actor of the pool needs, as Ray names them (only those it needs)."""
    need = {"CPU": config.num_cpus, "GPU": config.num_gpus}
    return {name: amount for name, amount in need.items() if amount > 0}


def actors_that_fit(nodes: list[Mapping[str, Any]], need: Mapping[str, float]) -> int | None:
    """How many actors needing `need` each the live nodes of `nodes` (`ray.nodes()`) hold with nothing
    else on them; an actor is placed on one node, so each node counts whole actors. None: no limit
    (an actor that needs nothing)."""
    if not need:
        return None
    return sum(
        min(int((node.get("Resources", {}).get(name, 0.0) + 1e-9) // amount) for name, amount in need.items())
        for node in nodes
        if node.get("Alive")
    )


def stall_window(config: RunnerConfig, slowest_chunk: float) -> float:
    """Seconds with no chunk back after which any pool is stalled: `stall_factor` times the slowest
    chunk so far, never under `stall_floor` (before the first chunk, only the floor: model loads)."""
    return max(config.stall_floor, config.stall_factor * slowest_chunk)


def unplaceable_window(config: RunnerConfig, slowest_chunk: float) -> float:
    """Seconds with no chunk back after which a pool the live nodes cannot hold is stalled."""
    return min(max(UNPLACEABLE_GRACE_S, 2 * slowest_chunk), stall_window(config, slowest_chunk))


def stall_kind(idle: float, slowest_chunk: float, config: RunnerConfig, fits: int | None) -> str | None:
    """Whether `idle` seconds with no chunk back is a stall: "unplaceable" (the live nodes hold only
    `fits` of the pool's actors), "no progress" (past stall_window), or None (wait on)."""
    if fits is not None and fits < config.concurrency and idle >= unplaceable_window(config, slowest_chunk):
        return "unplaceable"
    if idle >= stall_window(config, slowest_chunk):
        return "no progress"
    return None


def _amounts(resources: Mapping[str, float], names: Iterable[str]) -> str:
    return ", ".join(f"{name} {resources.get(name, 0.0):g}" for name in names)


def stall_message(
    kind: str,
    idle: float,
    slowest_chunk: float,
    config: RunnerConfig,
    nodes: list[Mapping[str, Any]],
    available: Mapping[str, float],
    waiting: tuple[int, int],
    written: int,
) -> str:
    """The one line a stalled pool stops with: what is pending (`waiting`: chunks, shards), what the
    pool needs, what the live nodes have (in all and free now), what is kept and what to do."""
    need = actor_need(config) or {"CPU": 0.0}
    live = [node for node in nodes if node.get("Alive")]
    total: dict[str, float] = {}
    for node in live:
        for name in need:
            total[name] = total.get(name, 0.0) + node.get("Resources", {}).get(name, 0.0)
    lost = len(nodes) - len(live)
    cluster = (
        f"the cluster has {_amounts(total, need)} on {len(live)} live node(s)"
        + (f" ({lost} lost)" if lost else "")
        + f", {_amounts(available, need)} free"
    )
    pending = (
        f"{waiting[0]} chunk(s) of {waiting[1]} shard(s) pending on a pool of {config.concurrency} actor(s) "
        f"needing {_amounts(need, need)} each"
    )
    kept = f"the {written} shard(s) written are kept and a rerun does the rest"
    if kind == "unplaceable":
        fits = actors_that_fit(nodes, actor_need(config))
        return (
            f"ray: no chunk back for {idle:.0f} s and the live nodes hold only {fits} of the pool's actors: {pending}; "
            f"{cluster}; {kept} (add a node or lower runner.concurrency to {max(fits or 0, 1)}: "
            "docs/guides/ray-cluster.md)"
        )
    return (
        f"ray: no chunk back for {idle:.0f} s (runner.stall_floor {config.stall_floor:g} s, runner.stall_factor "
        f"{config.stall_factor:g} x the slowest chunk {slowest_chunk:.1f} s): {pending}; {cluster}; {kept} "
        f"(a hung worker or a cluster busy with other work: Ray's messages are in {ray_log_path()})"
    )


def _stall_check(idle: float, slowest_chunk: float, config: RunnerConfig) -> tuple[str, list, dict] | None:
    """Ask the cluster (only once `idle` could be a stall) whether the pool is stalled: the kind,
    with the nodes and free resources it was judged on, or None."""
    if idle < unplaceable_window(config, slowest_chunk):
        return None
    import ray

    nodes = ray.nodes()
    kind = stall_kind(idle, slowest_chunk, config, actors_that_fit(nodes, actor_need(config)))
    return (kind, nodes, ray.available_resources()) if kind else None


def _run_ray(pending: list, worker, args, config, write, progress, pool: RayPool) -> RunStats:
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
                    parts = chunks(_read_input(shard, read), config.batch_size)
                    target = load.index(min(load))
                    load[target] += 1
                    expected[shard.index] = (shard, len(parts), target)
                    for number, part in enumerate(parts):
                        in_flight[actors[target].work.remote(job_id, job, _to_ipc(part))] = (shard.index, number)

            def accept(result, value) -> None:
                """One chunk back: its shard written once all its chunks are."""
                index, number = in_flight.pop(result)
                data, seconds, restart = value
                if restart and restart not in restarted:
                    restarted.add(restart)
                    stats.actor_restarts += 1
                worked[index] = worked.get(index, 0.0) + seconds
                arrived.setdefault(index, {})[number] = _from_ipc(data)
                shard, count, target = expected[index]
                if len(arrived[index]) == count:
                    parts = arrived.pop(index)
                    output = _concat([parts[n] for n in range(count)])
                    write(shard, output)
                    _count(stats, shard, output, worked.pop(index), progress)
                    load[target] -= 1

            feed()
            last_back, slowest = time.monotonic(), 0.0  # the stall guard's clock and scale
            while in_flight:
                done, _ = ray.wait(list(in_flight), num_returns=1, timeout=STALL_POLL_S)
                if not done:
                    idle = time.monotonic() - last_back
                    if stalled := _stall_check(idle, slowest, config):
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
    pool: RayPool | None = None,
) -> RunStats:
    """Bring the shard directory up to date with `plan`: drop shards the plan no longer has,
    keep the current ones, run the worker over the rest and write each as it completes.

    `input_reader(shard)` gives the shard's reader: a picklable function of no arguments that
    returns its input rows (a shard file of an upstream directory, `slice_reader` over a small
    table); a shard whose input no longer has the planned rows stops the run with an error.
    `pool`: the stage run's RayPool (ray runner), shared by its calls; none: a pool of this call's own.
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

    on_ray = config.runner == "ray" and bool(todo)
    if on_ray and ray_log_path() not in _log_announced:  # once per run, not once per image set or model
        _log_announced.add(ray_log_path())
        info(f"{desc}: Ray's own messages go to {ray_log_path()}")
    with ray_output_to_log() if on_ray else contextlib.nullcontext():
        progress = ShardProgress(desc, len(plan), done=len(plan) - len(todo))
        try:
            pending = ((shard, input_reader(shard)) for shard in todo)
            stats = run_shards(pending, worker, args, config, write, progress, pool)
        finally:
            progress.close()
    if stats.actor_restarts:
        info(
            f"{desc}: ray restarted {stats.actor_restarts} actor(s) whose process died and retried "
            "the chunks they had in flight"
        )
    return stats


# ---------------------------------------------------------------- measured rates


def record_rate(
    directory: str | os.PathLike,
    stage: str,
    stats: RunStats,
    config: RunnerConfig,
    unit: str,
    params_hash: str | None = None,
) -> None:
    """Keep this run's throughput (input rows per second) for the next plan of `stage`, in
    `directory/.rates/<stage>.json` (directory: the folder holding the stage's shard directories),
    with the hash of the settings it ran with (`params_hash`): a rate holds only for those settings."""

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
            "params_hash": params_hash,
        },
        Path(directory) / RATES_DIR / f"{stage}.json",
    )


def measured_rate(directory: str | os.PathLike, stage: str) -> dict | None:
    """The throughput the last run of `stage` on this machine recorded, or None."""

    path = Path(directory) / RATES_DIR / f"{stage}.json"
    return read_json(path) if path.is_file() else None
