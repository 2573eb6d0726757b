"""The ray runner's actor pool, watched from the driver (issue 49 item 1): the order in which it reads
shards and writes them (at most AHEAD_PER_ACTOR shards per actor in flight), what it counts (the
worker's seconds per shard, the run's seconds, no restarts where no actor died), one pool serving
two calls with their own workers, and a chunk slower than the stall poll that is no stall. All on
the test process's shared local Ray (`local_ray`); the cluster runs are in test_ray_cluster.py."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from babelforge.core import shards
from babelforge.core.ray_runner import AHEAD_PER_ACTOR, RayPool
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_shards
from babelforge.core.shard_work import from_ipc, to_ipc

from .shard_workers import TextStats

pytestmark = [pytest.mark.local_ray]

ROWS, SHARD_ROWS, CHUNK_ROWS = 50, 10, 5  # 5 shards of 2 chunks each


def table_of(rows: int) -> pa.Table:
    words = ["a red bicycle", "two dogs on a beach", "the old bridge at night", "rain"]
    return pa.table({"id": [f"r{i:03d}" for i in range(rows)], "text": [words[i % 4] for i in range(rows)]})


class Recorder:
    """The driver's side of a run: which shard's input was read and which shard was written, in
    order, each shard's output, and the seconds the progress log would show for it."""

    def __init__(self):
        self.events: list[str] = []
        self.outputs: dict[int, pa.Table] = {}
        self.seconds: dict[str, float] = {}

    def pending(self, table: pa.Table) -> list:
        plan = shards.plan_shards([table], SHARD_ROWS)
        return [(shard, self._reader(shard, to_ipc(table.slice(shard.start, shard.rows)))) for shard in plan]

    def _reader(self, shard, data: bytes):
        def read():
            self.events.append(f"read {shard.index}")
            return from_ipc(data)

        return read

    def write(self, shard, output) -> None:
        self.events.append(f"write {shard.index}")
        self.outputs[shard.index] = output

    def shard_done(self, name: str, rows: int, seconds: float) -> None:  # the progress log's call
        self.seconds[name] = seconds


def config(**settings) -> RunnerConfig:
    return RunnerConfig(runner="ray", batch_size=CHUNK_ROWS, local_cpus=2, **settings)


def test_one_actor_gets_two_shards_ahead_and_a_written_shard_frees_the_next_read():
    pytest.importorskip("ray")
    table, seen = table_of(ROWS), Recorder()
    delay = 0.02  # seconds per chunk
    with RayPool(config(concurrency=1)) as pool:
        stats = run_shards(seen.pending(table), TextStats, ("", delay), config(concurrency=1), seen.write, seen, pool)
    assert AHEAD_PER_ACTOR == 2
    # two shards read before any is written; each written shard makes room for one more read
    assert seen.events == [
        "read 0",
        "read 1",
        "write 0",
        "read 2",
        "write 1",
        "read 3",
        "write 2",
        "read 4",
        "write 3",
        "write 4",
    ]
    for index in range(ROWS // SHARD_ROWS):
        expected = TextStats("")(table.slice(index * SHARD_ROWS, SHARD_ROWS))
        assert seen.outputs[index].equals(expected), index
    assert (stats.shards, stats.rows_in, stats.rows_out, stats.actor_restarts) == (5, ROWS, ROWS, 0)
    assert 0 < stats.seconds < 120
    # a shard's time is the worker's time on both its chunks (each sleeps `delay`), not a clock reading
    assert len(seen.seconds) == 5
    assert all(2 * delay <= seconds < 30 for seconds in seen.seconds.values()), seen.seconds


def test_one_pool_serves_two_calls_with_their_own_workers_and_starts_once():
    """The second call's worker (another suffix) is built by the same actors; a chunk slower than
    the stall poll (STALL_POLL_S, 1 s) is waited for, far inside the stall window."""
    pytest.importorskip("ray")
    table = table_of(20)
    first, second = Recorder(), Recorder()
    with RayPool(config(concurrency=2)) as pool:
        run_shards(first.pending(table), TextStats, ("-a",), config(concurrency=2), first.write, first, pool)
        began = time.monotonic()
        stats = run_shards(
            second.pending(table.slice(0, 5)), TextStats, ("-b", 1.3), config(concurrency=2), second.write, second, pool
        )
        assert pool.starts == 1 and len(pool.actors) == 2
    assert time.monotonic() - began >= 1.3
    assert sorted(first.outputs) == [0, 1] and sorted(second.outputs) == [0]
    assert first.outputs[0].column("upper").to_pylist()[:2] == ["A RED BICYCLE-a", "TWO DOGS ON A BEACH-a"]
    assert second.outputs[0].column("upper").to_pylist()[:2] == ["A RED BICYCLE-b", "TWO DOGS ON A BEACH-b"]
    assert (stats.shards, stats.actor_restarts) == (1, 0)
    assert 1.3 <= next(iter(second.seconds.values())) < 30
