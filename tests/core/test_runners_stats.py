"""What both runners share (babelforge.core.shard_work) and the local runner's own run: the chunks a
worker is handed, the joined output, the steady rate a plan reads, and a runner name neither knows."""

from __future__ import annotations

import pyarrow as pa
import pytest

from babelforge.core import shards
from babelforge.core.errors import BabelforgeError
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.runners import run_sharded, run_shards
from babelforge.core.shard_work import RunStats, chunks, concat, slice_reader


def test_the_steady_rate_counts_the_rows_after_the_first_shard_over_the_time_after_it():
    stats = RunStats(shards=3, rows_in=300, first_rows_in=100, first_done=10.0, last_done=12.0)
    assert stats.steady_rate() == 100.0  # 200 rows in the 2 s after the first shard was written
    assert RunStats(shards=1, rows_in=100, first_rows_in=100, first_done=10.0, last_done=12.0).steady_rate() is None
    assert RunStats(shards=2, rows_in=200, first_rows_in=100, first_done=10.0, last_done=10.0).steady_rate() is None
    assert RunStats(shards=2, rows_in=200, first_rows_in=100, first_done=10.0, last_done=10.5).steady_rate() == 200.0


def test_chunks_cover_the_rows_once_and_an_empty_table_is_one_empty_chunk():
    table = pa.table({"id": list(range(5))})
    assert [chunk.num_rows for chunk in chunks(table, 2)] == [2, 2, 1]
    assert [chunk.num_rows for chunk in chunks(table.slice(0, 1), 1)] == [1]
    assert [chunk.num_rows for chunk in chunks(table.slice(0, 0), 4)] == [0]


def test_the_outputs_of_a_shards_chunks_join_in_order():
    first, second = pa.table({"id": [0, 1]}), pa.table({"id": [2]})
    assert concat([first, second]).column("id").to_pylist() == [0, 1, 2]
    assert concat([first]).equals(first)


class Doubles:
    def __call__(self, batch):
        return pa.table({"id": [2 * value for value in batch.column("id").to_pylist()]})


def test_a_local_run_counts_no_actor_restarts_and_says_nothing_of_ray(tmp_path, capsys):
    table = pa.table({"id": list(range(30))})
    stats = run_sharded(
        tmp_path,
        shards.plan_shards([table], 10),
        slice_reader(table),
        Doubles,
        (),
        RunnerConfig(batch_size=4),
        params_hash="p",
        model_hash="m",
        sort_by=["id"],
        desc="doubles",
    )
    assert (stats.shards, stats.rows_in, stats.rows_out, stats.actor_restarts) == (3, 30, 30, 0)
    assert "ray" not in capsys.readouterr().err.lower()


def test_a_runner_neither_knows_is_one_line():
    table = pa.table({"id": [1]})
    plan = shards.plan_shards([table], 1)
    with pytest.raises(BabelforgeError, match=r"^runner 'spark': use local or ray$"):
        run_shards([(plan[0], slice_reader(table)(plan[0]))], Doubles, (), RunnerConfig(runner="spark"), print)
