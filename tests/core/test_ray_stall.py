"""The stall guard on a cluster as the report met it: a head and a worker node on loopback, one
CPU each (tests/core/ray_cluster.py), a pool of two actors (one a node), the stage a Ray client
that is no node (test_ray_cluster's stage script).

- Slow but healthy: one chunk takes longer than `stall_floor` but less than `stall_factor` times
  the slowest before it; the stage waits for it and writes the local runner's bytes.
- The worker node's processes are SIGKILLed after two shards: its actor's restart has nowhere to
  go (the head's one CPU holds the other actor). The stage stops with one line in bounded time
  (it waited forever before), keeps the shards written, and the rerun the line asks for (a pool
  the live node holds) does only the rest and gives the local runner's bytes. Runs last: the
  cluster loses its node.
"""

from __future__ import annotations

import time

import pytest

from babelforge.core.ray_stall import UNPLACEABLE_GRACE_S

from .ray_cluster import loopback_cluster
from .test_ray_cluster import (
    captions,  # noqa: F401  (the fixture)
    directory_bytes,
    driver_environment,
    local_bytes,
    run_stage,
    stage_folder,
    start_fragile_stage,
    worked_on,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    pytest.importorskip("ray")
    cluster = loopback_cluster()
    try:
        cluster.start(head_cpus=1, node_cpus=1, client=True)  # the guide's "one CPU each"
        yield cluster
    finally:
        cluster.stop()


def test_a_slow_but_healthy_chunk_does_not_trip_the_guard(cluster, tmp_path, captions):  # noqa: F811
    """A pool of one, chunks of 0.3 s, then one of 14 s: past the 10 s floor (a guard without the
    scale stops there), inside the window of max(10 s, 60 x 0.3 s) = 18 s."""
    table = captions.slice(0, 120)  # 3 shards of 3 chunks; the last chunk is the slow one
    folder = stage_folder(tmp_path / "laptop", table)
    slow_id = table.column("id")[-1].as_py()
    env = driver_environment(
        cluster, folder, RAY_ADDRESS=cluster.client_address, CONCURRENCY="1", STALL_FLOOR="10", STALL_FACTOR="60"
    )
    result, seconds = run_stage(folder, env, "stall_workers.SlowChunk", 0.3, slow_id, 14.0)
    assert result.returncode == 0, result.stderr[-3000:]
    assert directory_bytes(folder / "out") == local_bytes(tmp_path / "local", table)
    print(f"slow but healthy: {seconds:.1f} s")


def test_a_lost_node_whose_actor_has_nowhere_to_go_stops_in_one_line_and_the_rerun_resumes(
    cluster,
    tmp_path,
    captions,  # noqa: F811
):
    table, folder, log, env, process = start_fragile_stage(cluster, tmp_path, captions)
    killed, committed, deadline = None, None, time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        written = len(list((folder / "out").glob("shard-*.json")))
        if killed is None and written >= 2 and log.exists() and cluster.node_id in log.read_text():
            cluster.kill_node()
            killed, committed = time.monotonic(), written
        time.sleep(0.02)
    if process.poll() is None:
        process.kill()
        pytest.fail(f"the stage still waited 120 s after it started: {process.communicate()[1][-3000:]}")
    stopped = time.monotonic()
    out, err = process.communicate()
    assert killed is not None and committed < 16, "the node was not lost in the middle of the run"
    assert process.returncode == 1, err[-3000:]
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1 and "Traceback" not in err, err[-3000:]
    line = lines[0]
    assert line.startswith("babelforge cluster: error: ray: no chunk back for "), line
    assert "the live nodes hold only 1 of the pool's actors" in line
    assert "the cluster has CPU 1 on 1 live node(s) (1 lost)" in line
    assert "lower runner.concurrency to 1" in line
    kept = len(list((folder / "out").glob("shard-*.json")))
    assert committed <= kept < 16 and f"the {kept} shard(s) written are kept" in line
    # bounded: the healthy actor's remaining shards (0.6 s each), then the grace, then the stop
    assert stopped - killed < 16 * 0.6 + UNPLACEABLE_GRACE_S + 30, stopped - killed
    print(f"node lost: the line {stopped - killed:.1f} s after the kill, {kept} shards kept: {line}")

    # the rerun the line asks for: a pool the live node holds does only the shards left
    rerun_env = {**env, "CONCURRENCY": "1"}
    result, seconds = run_stage(folder, rerun_env, "Fragile", str(log), None, 0.2)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"cluster: 16 shards, {kept} current, {16 - kept} to do" in result.stderr, result.stderr[-3000:]
    assert len(worked_on(log)) == 2  # the first run's node and the head
    assert directory_bytes(folder / "out") == local_bytes(tmp_path / "local", table)
    print(f"rerun: {16 - kept} shards in {seconds:.1f} s, the local runner's bytes")
