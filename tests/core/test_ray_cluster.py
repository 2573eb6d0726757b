"""The ray runner on a cluster as a user meets one: a head and a second node on loopback, each
started from a working folder and HOME of its own (tests/core/ray_cluster.py), token
authentication on, and a stage whose process is not a node, reaching the cluster by the two
routes the Ray guide gives: a Ray job (`ray job submit`, the code carried in its runtime_env as
the package folder of the project's wheel) and a Ray client (`ray://`). The stage's input is in the stage's folder, read there
and sent to the actors; its outputs are written there. Every output is byte-identical to the
local runner's. Then the failures, each one line: no cluster, a refused token, a node without the
model, and a node lost mid-run (Ray restarts its actor on the head; the bytes stay the same).

One cluster for the module (starting one costs ~10 s on 2 cores); the node-kill test runs last.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from babelforge.core import shards
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_sharded
from babelforge.core.shard_work import slice_reader

from .ray_cluster import RAY, REPO, free_port, loopback_cluster
from .shard_workers import TextStats

pytestmark = pytest.mark.slow

SHARD_SIZE = 40

# The stage, as its own process: the input rows from a JSON file beside it, 40 rows a shard, each
# read logged with the pid that read it; errors end it with the CLI's one line.
RUN = textwrap.dedent("""
    import importlib, json, os, sys, time
    import pyarrow as pa
    import babelforge
    from babelforge.core import shards
    from babelforge.core.errors import BabelforgeError
    from babelforge.core.runner_config import RunnerConfig
    from babelforge.core.runners import run_sharded
    from babelforge.core.shard_work import slice_reader
    from tests.core import shard_workers

    directory, source, log, worker, args = sys.argv[1:]
    began = time.monotonic()
    print("babelforge from", os.path.dirname(babelforge.__file__), flush=True)
    rows = json.loads(open(source).read())
    table = pa.table({"id": [r[0] for r in rows], "text": [r[1] for r in rows]})
    plan = shards.plan_shards(table.to_batches(max_chunksize=37), 40)
    slices = slice_reader(table)

    def reader(shard):
        def read():
            with open(log + ".reads", "a") as handle:
                handle.write(f"{os.getpid()}\\n")
            return slices(shard)()
        return read

    config = RunnerConfig(runner="ray", concurrency=int(os.environ.get("CONCURRENCY", "2")), batch_size=16,
                          max_restarts=2, max_task_retries=2,
                          connect_timeout=float(os.environ.get("CONNECT_TIMEOUT", "20")),
                          stall_floor=float(os.environ.get("STALL_FLOOR", "900")),
                          stall_factor=float(os.environ.get("STALL_FACTOR", "20")))
    module, _, name = worker.rpartition(".")  # a class of shard_workers, or module.Class of tests/core
    workers = importlib.import_module("tests.core." + module) if module else shard_workers
    try:
        run_sharded(directory, plan, reader, getattr(workers, name), tuple(json.loads(args)), config,
                    params_hash=shards.stable_hash({"suffix": ""}), model_hash="m1", sort_by=["id"], desc="cluster")
    except BabelforgeError as error:
        print(f"babelforge cluster: error: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"took {time.monotonic() - began:.1f} s", flush=True)
""")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pytest.importorskip("ray")
    cluster = loopback_cluster()
    try:
        # the head keeps room for the actor the lost node had (the last test)
        cluster.start(head_cpus=2, node_cpus=1, dashboard=True, client=True)
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def captions(shared_data) -> pa.Table:
    data = json.loads((shared_data / "xtd" / "xtd.json").read_text(encoding="utf-8"))
    texts = [caption[0] if isinstance(caption, list) else caption for caption in data["captions"]["en"]]
    return pa.table({"id": [f"c{i:06d}" for i in range(len(texts))], "text": texts})


def local_bytes(folder: Path, table: pa.Table) -> dict[str, bytes]:
    """What the local runner writes for `table` (TextStats, as the cluster's Fragile without deaths)."""
    run_sharded(
        folder,
        shards.plan_shards(table.to_batches(max_chunksize=37), SHARD_SIZE),
        slice_reader(table),
        TextStats,
        ("",),
        RunnerConfig(batch_size=16),
        params_hash=shards.stable_hash({"suffix": ""}),
        model_hash="m1",
        sort_by=["id"],
        desc="local",
    )
    return directory_bytes(folder)


def directory_bytes(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.glob("shard-*"))}


def stage_folder(root: Path, table: pa.Table) -> Path:
    """The stage's machine: a folder holding the stage script and its input rows."""
    root.mkdir(parents=True)
    (root / "run.py").write_text(RUN)
    rows = list(zip(table.column("id").to_pylist(), table.column("text").to_pylist()))
    (root / "rows.json").write_text(json.dumps(rows))
    return root


def driver_environment(cluster, home: Path, **extra: str) -> dict[str, str]:
    """A machine that is no node: its own HOME (no ~/.ray/auth_token), the cluster's token by
    RAY_AUTH_TOKEN_PATH only (RAY_AUTH_MODE unset: the runner turns it on)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("RAY_")}
    env.update(
        HOME=str(home),
        PYTHONPATH=str(REPO),
        RAY_AUTH_TOKEN_PATH=str(cluster.token_file),
        RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
    )
    return {**env, **extra}


def start_fragile_stage(cluster, tmp_path: Path, captions: pa.Table):
    """The stage a node-loss test watches, started as a Ray client of `cluster`: 640 captions (16 shards of
    3 chunks, 0.6 s a shard on an actor) through the Fragile worker. Returns the table, the stage's folder,
    its call log, its environment and the running process."""
    table = captions.slice(0, 640)
    folder = stage_folder(tmp_path / "laptop", table)
    log = folder / "calls.log"
    env = driver_environment(cluster, folder, RAY_ADDRESS=cluster.client_address)
    process = subprocess.Popen(
        stage_command(folder, "Fragile", str(log), None, 0.2),
        cwd=folder,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    return table, folder, log, env, process


def stage_command(folder: Path, worker: str, *args) -> list[str]:
    """run.py's command line: output folder, input rows, call log, worker class and its arguments."""
    paths = [folder / "out", folder / "rows.json", folder / "calls.log"]
    return [sys.executable, "run.py", *map(str, paths), worker, json.dumps(args)]


def run_stage(folder: Path, env: dict[str, str], worker: str, *args, timeout: float = 300):
    """The stage in `folder`; its result and seconds. The timeout allows Ray 2.60's client-server flake
    its retries on a loaded machine (each try can wait ~40 s for the head's server: ray_connect.CLIENT_SERVER_TRIES);
    a run past it fails with what the stage printed so far."""
    began = time.monotonic()
    try:
        result = subprocess.run(
            stage_command(folder, worker, *args),
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as error:
        printed = error.stderr.decode(errors="replace") if isinstance(error.stderr, bytes) else error.stderr or ""
        pytest.fail(f"the stage ran past {timeout:.0f} s; its stderr so far:\n{printed[-3000:]}")
    return result, time.monotonic() - began


def worked_on(log: Path) -> set[str]:
    """The Ray node ids the Fragile workers ran on."""
    return {line.split()[1] for line in log.read_text().splitlines()}


def other_address() -> str | None:
    """This machine's address on its network, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_the_cluster_answers_on_loopback_only(cluster):
    """GCS, Ray client server and dashboard: none reachable at the machine's network address."""
    elsewhere = other_address()
    if elsewhere is None:
        pytest.skip("this machine has no network address besides loopback")
    for port in (cluster.port, cluster.client_port, cluster.dashboard_port):
        with pytest.raises(OSError):
            socket.create_connection((elsewhere, port), timeout=2).close()


def test_a_ray_job_carrying_the_code_writes_the_local_runners_bytes(cluster, tmp_path, captions):
    """`ray job submit` from a machine that is no node: the job's runtime_env carries babelforge (the
    package folder of its wheel, `py_modules`: its driver and actors import that copy), the driver runs on the head and reads the input
    from, and writes the shards to, a folder every node can reach (here: one file system)."""
    table = captions.slice(0, 320)  # 8 shards
    shared = stage_folder(tmp_path / "shared", table)
    job = tmp_path / "job"
    job.mkdir()
    (job / "run.py").write_text(RUN)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = wheels.glob("babelforge-*.whl")
    with zipfile.ZipFile(wheel) as archive:  # the package folder: Ray pip-installs a .whl with its dependencies
        archive.extractall(tmp_path / "code", [name for name in archive.namelist() if name.startswith("babelforge/")])
    env = driver_environment(cluster, tmp_path / "submitter", RAY_AUTH_MODE="token")
    command = [str(RAY), "job", "submit", "--address", cluster.dashboard, "--working-dir", str(job)]
    command += ["--runtime-env-json", json.dumps({"py_modules": [str(tmp_path / "code" / "babelforge")]}), "--"]
    command += stage_command(shared, "Fragile", str(shared / "calls.log"), None, 0.1)
    began = time.monotonic()
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    seconds = time.monotonic() - began
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    origin = next(line for line in output.splitlines() if line.startswith("babelforge from"))
    assert "runtime_resources" in origin and str(REPO) not in origin, origin  # the wheel's copy
    assert "cluster: 8 shards, 0 current, 8 to do (runner ray)" in output
    assert len(worked_on(shared / "calls.log")) == 2  # both nodes worked
    assert directory_bytes(shared / "out") == local_bytes(tmp_path / "local", table)
    print(f"ray job submit: {seconds:.1f} s")


def test_a_ray_client_that_is_no_node_reads_here_and_writes_here(cluster, tmp_path, captions):
    """`RAY_ADDRESS=ray://head:port` from a process that is no node, in a folder no node was started
    from: every shard is read by the stage's own process and sent to the actors, the actors run on
    both nodes, the shards land in the stage's folder, byte-identical to the local runner's."""
    table = captions.slice(0, 320)
    folder = stage_folder(tmp_path / "laptop", table)
    env = driver_environment(cluster, folder, RAY_ADDRESS=cluster.client_address)
    result, seconds = run_stage(folder, env, "Fragile", str(folder / "calls.log"), None, 0.1)
    assert result.returncode == 0, result.stderr[-3000:]
    readers = set((folder / "calls.log.reads").read_text().split())
    assert len(readers) == 1 and len((folder / "calls.log.reads").read_text().split()) == 8
    assert str(os.getpid()) not in readers  # the stage's process (run.py), no actor and no Ray task
    assert len(worked_on(folder / "calls.log")) == 2
    assert directory_bytes(folder / "out") == local_bytes(tmp_path / "local", table)
    print(f"ray client: {seconds:.1f} s")


def test_a_node_without_the_model_is_one_line_naming_the_node_and_the_path(cluster, tmp_path, captions):
    folder = stage_folder(tmp_path / "laptop", captions.slice(0, 80))
    (cluster.root / "head" / "tiny-model").mkdir()  # the head has it, the second node does not
    env = driver_environment(cluster, folder, RAY_ADDRESS=cluster.client_address)
    result, seconds = run_stage(folder, env, "NodeModel", "tiny-model")
    assert result.returncode == 1, result.stderr[-3000:]  # 0: no actor was placed on the second node
    missing = str(cluster.root / "node" / "tiny-model")
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert errors == [
        f"babelforge cluster: error: ray: node 127.0.0.1 ({cluster.node_id[:8]}): {missing}: not on this node; "
        "every node needs the models at the same absolute path (a shared volume or the nodes' image)"
    ], result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    print(f"missing model: {seconds:.1f} s, {len(result.stderr.splitlines())} stderr lines")


def test_no_cluster_and_a_refused_token_are_one_line_in_seconds(cluster, tmp_path, captions):
    """Nothing listening, a port that takes connections but gives no Ray answer (2 s timeout), and
    a cluster given another token (by both routes): each is one line, in well under the timeout
    Ray's own retries take (13.7 min, ~30 s)."""
    folder = stage_folder(tmp_path / "laptop", captions.slice(0, 80))
    wrong = tmp_path / "wrong-token"
    wrong.write_text("0" * 48)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        cases = {
            "nothing": ({"RAY_ADDRESS": f"127.0.0.1:{free_port()}"}, "ray: no cluster answered at 127.0.0.1:"),
            "silent": (
                {"RAY_ADDRESS": f"127.0.0.1:{silent.getsockname()[1]}", "CONNECT_TIMEOUT": "2"},
                "ray: no cluster answered at 127.0.0.1:",
            ),
            "token": (
                {"RAY_ADDRESS": cluster.address, "RAY_AUTH_TOKEN_PATH": str(wrong)},
                f"ray: the cluster at {cluster.address} refused this client's token",
            ),
            "client token": (
                {"RAY_ADDRESS": cluster.client_address, "RAY_AUTH_TOKEN_PATH": str(wrong)},
                f"ray: the cluster at {cluster.client_address} refused this client's token",
            ),
        }
        for name, (extra, start) in cases.items():
            result, seconds = run_stage(folder, driver_environment(cluster, folder, **extra), "TextStats")
            errors = [line for line in result.stderr.splitlines() if "error:" in line]
            assert result.returncode == 1 and len(errors) == 1, (name, result.stderr[-3000:])
            assert errors[0].startswith(f"babelforge cluster: error: {start}"), (name, errors)
            assert seconds < 10, (name, seconds)
            print(f"{name}: {seconds:.1f} s, {len(result.stderr.splitlines())} stderr lines")
    assert not (folder / "out").exists() or not list((folder / "out").glob("shard-*"))


def test_a_node_lost_mid_run_restarts_its_actor_and_the_bytes_stay_the_same(cluster, tmp_path, captions):
    """Once the second node's actor has worked and two shards are written, the node is SIGKILLed:
    Ray restarts its actor on the head and retries its chunks, the stage (a Ray client) finishes,
    logs the restart, and writes the local runner's bytes. Runs last: the module's cluster loses
    its node."""
    table, folder, log, env, process = start_fragile_stage(cluster, tmp_path, captions)
    committed, deadline = None, time.monotonic() + 90
    while process.poll() is None and time.monotonic() < deadline:
        written = len(list((folder / "out").glob("shard-*.json")))
        if committed is None and written >= 2 and log.exists() and cluster.node_id in log.read_text():
            committed = written
            cluster.kill_node()
        time.sleep(0.02)
    out, err = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
    assert process.returncode == 0, err[-3000:]
    assert committed is not None and committed < 16, "the node was not lost in the middle of the run"
    assert "cluster: ray restarted 1 actor(s) whose process died" in err, err[-3000:]
    assert len(worked_on(log)) == 2
    assert directory_bytes(folder / "out") == local_bytes(tmp_path / "local", table)
    print(f"node lost: {out.splitlines()[-1]}, {len(err.splitlines())} stderr lines")
