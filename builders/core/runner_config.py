"""How a sharded stage runs: `RunnerConfig`, the `<stage>.runner` settings both runners read
(babelforge.core.runners: local or a Ray actor pool). Its own module, so a stage that only reads the
settings (captions_plan) does not depend on the runners' code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError


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
