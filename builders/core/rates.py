"""Measured throughput, kept for plans (`babelforge captions_plan`): a sharded run records its rate
(record_rate) in a `.rates/` folder beside the stage's shard directories, never inside a DVC output
(a timing would make identical runs differ)."""

from __future__ import annotations

import os
from pathlib import Path

from babelforge.core.io import read_json, write_json
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.shard_work import RunStats

RATES_DIR = ".rates"


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
