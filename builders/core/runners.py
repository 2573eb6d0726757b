"""Runners: the one way a sharded stage runs its per-shard work, here or on a Ray cluster.

A stage hands `run_shards` its pending shards, a reader for each (`input_reader(shard)`: a
picklable function of no arguments returning the shard's input rows: a shard file read back,
a slice of a listing), a worker *class* and the arguments to build it, and a
`write(shard, table)` callback. The worker's constructor loads its model once;
`worker(table) -> table` maps a chunk of input rows to output rows. Both runners cut every
shard into the same chunks of `batch_size` rows and hand the worker exactly those
(babelforge.core.shard_work), so a worker whose output depends on its batch (padding in a GPU
kernel) gives the same bytes under either:

- `local` (here): one worker in this process, one shard after the other: read, work, write.
- `ray` (babelforge.core.ray_runner): a pool of Ray actors fed chunks through the object store,
  connected by babelforge.core.ray_connect, stopped in one line when stalled (ray_stall).

This process always does the writing, so the shard directory (a DVC output) lives where the
stage runs, whichever machines did the work. Ray's own messages go to a log file of the run
(babelforge.core.ray_log), the terminal keeps the stage's lines. `run_sharded` is a sharded stage
start to end: drop unplanned shards, keep current ones, run the rest.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import ShardProgress, info
from babelforge.core.ray_log import announce_ray_log, ray_output_to_log
from babelforge.core.ray_runner import RayPool, run_ray
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.shard_work import InputReader, RunStats, chunks, concat, count_shard, read_input
from babelforge.core.shards import pending_shards, remove_unplanned, write_shard


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
            return run_ray(list(pending), worker, args, config, write, progress, pool)
        with RayPool(config) as own:
            return run_ray(list(pending), worker, args, config, write, progress, own)
    raise BabelforgeError(f"runner {config.runner!r}: use local or ray")


def _run_local(pending, worker, args, config, write, progress) -> RunStats:
    stats = RunStats(started=time.monotonic())
    started = stats.started
    instance = None
    for shard, read in pending:
        if instance is None:  # the model loads only when there is work
            instance = worker(*args)
        began = time.monotonic()
        table = read_input(shard, read)
        output = concat([instance(chunk) for chunk in chunks(table, config.batch_size)])
        write(shard, output)
        count_shard(stats, shard, output, time.monotonic() - began, progress)
    stats.seconds = time.monotonic() - started
    return stats


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
    if on_ray:
        announce_ray_log(desc)
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
