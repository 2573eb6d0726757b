"""The Ray runner's stall guard: the driver never waits forever. A pool the live nodes can no longer
hold (an actor restarted after its node was lost, every other CPU taken) stops once its chunks stop
coming back; any pool stops after `stall_floor` seconds, or `stall_factor` times the slowest chunk
if longer, with no chunk back. The judgement (stall_kind) and its one line (stall_message) are pure;
stall_check asks the cluster."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from babelforge.core.ray_log import ray_log_path
from babelforge.core.runner_config import RunnerConfig

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


def stall_check(idle: float, slowest_chunk: float, config: RunnerConfig) -> tuple[str, list, dict] | None:
    """Ask the cluster (only once `idle` could be a stall) whether the pool is stalled: the kind,
    with the nodes and free resources it was judged on, or None."""
    if idle < unplaceable_window(config, slowest_chunk):
        return None
    import ray

    nodes = ray.nodes()
    kind = stall_kind(idle, slowest_chunk, config, actors_that_fit(nodes, actor_need(config)))
    return (kind, nodes, ray.available_resources()) if kind else None
