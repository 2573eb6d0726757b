"""ray_runner's pure parts, without a cluster: which error a chunk's failure stops the stage with (the
worker's own, found in the chain Ray wraps it in; an actor lost beyond its retries; else Ray's), and the
model path every node reads. The pool itself runs in test_shards.py and test_ray_cluster.py."""

from __future__ import annotations

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.ray_runner import _actor_died, _cause, _ray_failure, model_path
from babelforge.core.runner_config import RunnerConfig

ray_exceptions = pytest.importorskip("ray.exceptions")


class TaskError(Exception):
    """Ray's task error as the driver gets it: the worker's exception is its `cause`."""

    def __init__(self, cause):
        super().__init__("Traceback (most recent call last): ...")
        self.cause = cause


def test_the_worker_s_own_error_is_found_through_ray_s_wrapping_and_the_python_chain():
    own = BabelforgeError("captions_translate: error: the model at models/nllb has no tokenizer")
    assert _cause(TaskError(own)) is own
    outer = RuntimeError("ray.get failed")
    outer.__cause__ = TaskError(own)
    assert _cause(outer) is own
    context = ValueError("while handling")
    context.__context__ = own
    assert _cause(context) is own
    assert _ray_failure(outer, RunnerConfig()).args == (str(own),)


def test_a_wrapper_that_is_itself_a_project_error_gives_the_error_it_wraps():
    """Ray's task error can be an instance of the raised error's class, with a traceback for its text."""
    own = BabelforgeError("the one line")
    wrapper = type("RayTaskError(BabelforgeError)", (BabelforgeError,), {})("Traceback ... the one line")
    wrapper.cause = own
    assert _cause(wrapper) is own


def test_no_project_error_in_a_chain_even_one_that_loops_is_none():
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert _cause(first) is None and _cause(None) is None
    assert _ray_failure(first, RunnerConfig()) is first  # Ray's own error, unchanged


def test_an_actor_that_died_for_good_is_told_apart_from_one_whose_worker_failed_to_start():
    died = ray_exceptions.RayActorError(error_msg="The actor died unexpectedly")
    init_failed = ray_exceptions.RayActorError(error_msg="The actor died in __init__", actor_init_failed=True)
    assert _actor_died(died) and not _actor_died(init_failed)
    assert _actor_died(TaskError(died))  # as the cause of Ray's wrapper
    chained = RuntimeError("ray.get failed")
    chained.__context__ = died
    assert _actor_died(chained)
    assert not _actor_died(RuntimeError("no actor here")) and not _actor_died(None)
    line = str(_ray_failure(chained, RunnerConfig(max_restarts=0, max_task_retries=-1)))
    assert line.startswith("ray: a worker process died more often than max_restarts=0 and max_task_retries=-1 allow")
    assert line.endswith("the shards written are kept")


def test_a_model_path_that_exists_is_made_absolute_and_anything_else_is_kept(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "nllb").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert model_path("models/nllb") == str(tmp_path / "models" / "nllb")
    assert model_path("~/models/nllb") == str(tmp_path / "models" / "nllb")
    assert model_path("facebook/nllb-200-distilled-600M") == "facebook/nllb-200-distilled-600M"
