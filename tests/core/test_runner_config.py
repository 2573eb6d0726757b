"""The `<stage>.runner` settings at their edges: each bounded number accepted at its bound and refused one
step past it with one line naming the key, from params.yaml as from the constructor."""

from __future__ import annotations

import re

import pytest

from babelforge.core.config import build
from babelforge.core.errors import BabelforgeError
from babelforge.core.runner_config import RunnerConfig

WHERE = "captions_translate.runner"

# key -> (the value at its bound, accepted; one step past it, refused)
EDGES = {
    "shard_size": (1, 0),
    "concurrency": (1, 0),
    "num_gpus": (0, -0.5),
    "num_cpus": (0, -0.5),
    "batch_size": (1, 0),
    "connect_timeout": (0.5, 0.0),
    "local_cpus": (1, 0),
    "max_restarts": (-1, -2),
    "max_task_retries": (-1, -2),
    "stall_factor": (1, 0.5),
    "stall_floor": (0.5, 0.0),
}


@pytest.mark.parametrize("key", sorted(EDGES))
def test_a_runner_number_is_taken_at_its_bound_and_refused_past_it(key):
    at_bound, past = EDGES[key]
    assert getattr(build(RunnerConfig, {key: at_bound}, WHERE), key) == at_bound
    with pytest.raises(BabelforgeError, match="^" + re.escape(f"params.yaml: {WHERE}.{key} is {past!r}; ")):
        build(RunnerConfig, {key: past}, WHERE)


def test_the_smallest_runner_is_one_row_per_shard_and_call_on_one_actor():
    smallest = RunnerConfig(shard_size=1, batch_size=1, concurrency=1, max_restarts=-1, max_task_retries=-1)
    assert (smallest.shard_size, smallest.batch_size, smallest.concurrency) == (1, 1, 1)
    for counts in ({"shard_size": 0}, {"batch_size": 0}, {"concurrency": 0}):
        with pytest.raises(BabelforgeError, match="shard_size, batch_size and concurrency must be at least 1"):
            RunnerConfig(**counts)
    for retries in ({"max_restarts": -2}, {"max_task_retries": -2}):
        with pytest.raises(BabelforgeError, match="must be -1 \\(no limit\\) or more"):
            RunnerConfig(**retries)
