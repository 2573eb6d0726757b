"""The Ray runner's stall guard, as pure functions: a pool the live nodes cannot hold stops once
the chunks stop coming back; any pool stops after `stall_window` with no chunk back, a window that
grows with the slowest chunk so far, so slow but healthy work never trips it. The node dicts are
what `ray.nodes()` gives (the keys the guard reads). The real cluster runs are in
tests/core/test_ray_stall.py."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from babelforge.core.config import load_config, override
from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_stall import (
    UNPLACEABLE_GRACE_S,
    actor_need,
    actors_that_fit,
    stall_kind,
    stall_message,
    stall_window,
    unplaceable_window,
)
from babelforge.core.runner_config import RunnerConfig
from babelforge.core.stage_settings import params_groups


def node(cpus: float, gpus: float = 0.0, alive: bool = True) -> dict:
    resources = {"CPU": cpus, "memory": 2.0e9, "node:127.0.0.1": 1.0}
    if gpus:
        resources["GPU"] = gpus
    return {"Alive": alive, "NodeManagerAddress": "127.0.0.1", "Resources": resources}


# the report's cluster: a head and a worker node, one CPU each; the worker's raylet SIGKILLed
ONE_CPU_EACH = [node(1), node(1)]
WORKER_LOST = [node(1), node(1, alive=False)]


def test_a_lost_node_leaves_room_for_fewer_actors_than_the_pool():
    need = actor_need(RunnerConfig(num_cpus=1, num_gpus=0))
    assert need == {"CPU": 1}
    assert actors_that_fit(ONE_CPU_EACH, need) == 2
    assert actors_that_fit(WORKER_LOST, need) == 1
    assert actors_that_fit([node(2), node(1, alive=False)], need) == 2  # a spare CPU on the head: it recovers


def test_an_actor_is_placed_on_one_node_so_half_cpus_on_two_nodes_hold_none():
    assert actors_that_fit([node(0.5), node(0.5)], {"CPU": 1}) == 0
    assert actors_that_fit([node(8, gpus=1)], {"CPU": 1, "GPU": 0.5}) == 2  # two actors share a GPU
    assert actors_that_fit([node(8, gpus=1), node(8)], {"CPU": 1, "GPU": 1}) == 1  # a CPU-only node holds none
    assert actors_that_fit([node(0.9)], {"CPU": 0.3}) == 3  # no float rounding loses an actor
    assert actors_that_fit(WORKER_LOST, actor_need(RunnerConfig(num_cpus=0, num_gpus=0))) is None


def test_the_window_scales_with_the_slowest_chunk_and_never_falls_under_the_floor():
    config = RunnerConfig(stall_factor=20, stall_floor=900)
    assert stall_window(config, 0.0) == 900  # before the first chunk: the model loads
    assert stall_window(config, 30.0) == 900
    assert stall_window(config, 60.0) == 1200
    assert unplaceable_window(config, 0.2) == UNPLACEABLE_GRACE_S
    assert unplaceable_window(config, 30.0) == 60.0  # a live actor's chunk in progress comes back first
    assert unplaceable_window(RunnerConfig(stall_factor=1, stall_floor=5), 0.2) == 5  # never past the window


def test_a_pool_the_live_nodes_cannot_hold_stops_after_the_grace_and_a_healthy_one_waits():
    config = RunnerConfig(concurrency=2, stall_factor=20, stall_floor=900)
    assert stall_kind(UNPLACEABLE_GRACE_S - 0.5, 0.2, config, fits=1) is None
    assert stall_kind(UNPLACEABLE_GRACE_S, 0.2, config, fits=1) == "unplaceable"
    assert stall_kind(UNPLACEABLE_GRACE_S, 0.2, config, fits=2) is None  # all placed: only slow
    assert stall_kind(899, 0.2, config, fits=2) is None
    assert stall_kind(900, 0.2, config, fits=2) == "no progress"
    assert stall_kind(900, 0.2, config, fits=None) == "no progress"


def test_a_slow_but_healthy_chunk_never_trips_the_guard():
    """Chunks of 60 s, then one of 1,100 s (over the 900 s floor, under 20 x 60 s): never a stall."""
    config = RunnerConfig(concurrency=2, stall_factor=20, stall_floor=900)
    assert all(stall_kind(idle, 60.0, config, fits=2) is None for idle in (59, 600, 1100, 1199))
    assert stall_kind(1200, 60.0, config, fits=2) == "no progress"


@given(
    idle=st.floats(0, 1e5),
    slowest=st.floats(0, 1e4),
    more=st.floats(0, 1e5),
    factor=st.floats(1, 100),
    floor=st.floats(0.01, 1e4),
    concurrency=st.integers(1, 16),
    fits=st.one_of(st.none(), st.integers(0, 32)),
)
def test_a_stall_is_never_called_early_and_stays_one(idle, slowest, more, factor, floor, concurrency, fits):
    config = RunnerConfig(concurrency=concurrency, stall_factor=factor, stall_floor=floor)
    kind = stall_kind(idle, slowest, config, fits)
    if idle < floor or idle < factor * slowest:
        assert kind != "no progress"
    if idle < min(UNPLACEABLE_GRACE_S, floor) or idle < min(2 * slowest, floor, factor * slowest):
        assert kind is None
    if fits is None or fits >= concurrency:
        assert kind != "unplaceable"
    if kind is not None:
        assert stall_kind(idle + more, slowest, config, fits) is not None  # longer idle: still stalled


def test_the_line_says_what_is_pending_what_the_cluster_has_and_what_to_do():
    config = RunnerConfig(concurrency=2, num_cpus=1, num_gpus=0)
    line = stall_message("unplaceable", 12.4, 0.2, config, WORKER_LOST, {"CPU": 0.0}, (6, 2), 14)
    assert "\n" not in line
    assert line.startswith("ray: no chunk back for 12 s and the live nodes hold only 1 of the pool's actors")
    assert "6 chunk(s) of 2 shard(s) pending on a pool of 2 actor(s) needing CPU 1 each" in line
    assert "the cluster has CPU 1 on 1 live node(s) (1 lost), CPU 0 free" in line
    assert "the 14 shard(s) written are kept and a rerun does the rest" in line
    assert "lower runner.concurrency to 1" in line
    slow = stall_message("no progress", 901, 3.0, config, ONE_CPU_EACH, {"CPU": 0.0}, (3, 1), 0)
    assert "runner.stall_floor 900 s, runner.stall_factor 20 x the slowest chunk 3.0 s" in slow
    assert "the cluster has CPU 2 on 2 live node(s), CPU 0 free" in slow


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("captions.runner.stall_factor", "0.5", "it must be at least 1"),
        ("eval.runner.stall_floor", "0", "it must be above 0"),
        ("eval.runner.stall_floor", ".inf", "it must be a finite number above 0"),
    ],
)
def test_the_settings_keep_their_declared_range(repo_root, key, value, message):
    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    group = next(name for name in sorted(params_groups(), key=len, reverse=True) if key.startswith(name + "."))
    cls = params_groups()[group][0]
    with pytest.raises(BabelforgeError, match=rf"^params.yaml: {key} is [-.\w]+; {message}$"):
        load_config(cls, override(params, [f"{key}={value}"]), group)
    assert load_config(cls, params, group)  # the project's own values are in range
