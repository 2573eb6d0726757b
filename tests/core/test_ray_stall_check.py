"""The stall guard asks the cluster only once the wait could be a stall (ray_stall.stall_check): not a
second before the unplaceable window, and from that second on with the live nodes' answer."""

from __future__ import annotations

import pytest

from babelforge.core.ray_stall import stall_check, unplaceable_window
from babelforge.core.runner_config import RunnerConfig

ray = pytest.importorskip("ray")

# a head and a worker whose raylet was killed: one CPU left for a pool of two one-CPU actors
WORKER_LOST = [
    {"Alive": True, "Resources": {"CPU": 1.0}},
    {"Alive": False, "Resources": {"CPU": 1.0}},
]


def test_the_cluster_is_asked_from_the_unplaceable_window_on(monkeypatch):
    asked = []
    monkeypatch.setattr(ray, "nodes", lambda: asked.append("nodes") or WORKER_LOST)
    monkeypatch.setattr(ray, "available_resources", lambda: {"CPU": 0.0})
    config = RunnerConfig(runner="ray", concurrency=2, num_cpus=1, num_gpus=0)
    window = unplaceable_window(config, slowest_chunk=1.0)
    assert stall_check(window - 0.001, 1.0, config) is None and not asked  # slow work: Ray is not asked
    assert stall_check(window, 1.0, config) == ("unplaceable", WORKER_LOST, {"CPU": 0.0})
    assert asked == ["nodes"]
