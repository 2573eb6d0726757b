"""What both runners (babelforge.core.runners: local, Ray) do the same way with a shard: read its
input and check it against the plan, cut it into the chunks a worker is handed, join the worker's
outputs, and count what was written (RunStats). Arrow IPC bytes are how a slice travels: in a
shard's reader (slice_reader) and, on Ray, through the object store."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from babelforge.core.errors import BabelforgeError


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


def concat(tables: list):
    import pyarrow as pa

    return pa.concat_tables(tables).combine_chunks() if len(tables) > 1 else tables[0]


def read_input(shard, read: InputReader):
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
        return functools.partial(from_ipc, to_ipc(table.slice(shard.start, shard.rows)))

    return reader


def count_shard(stats: RunStats, shard, output, seconds: float, progress) -> None:
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


def to_ipc(table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(data: bytes):
    import pyarrow as pa

    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()
