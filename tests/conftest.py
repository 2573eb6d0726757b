"""Fixtures every test area may use: where the repo and the source mirror are.

Also the state every test starts from, whatever ran before it: the test process runs under the
CPU pin a stage runs under (set here, before a test imports ctranslate2, torch or numpy), and
what a test sets in os.environ is undone after it (`babelforge.cli.main` pins the CPU by writing
os.environ; a later test, or a subprocess it starts, must not inherit that).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import settings

from babelforge.core.determinism import cpu_isa_from_params, pin_cpu
from babelforge.core.errors import BabelforgeError
from babelforge.core.params import load_params
from tests import schedule
from tests.shared import built_once

REPO = Path(__file__).resolve().parents[1]

# Property tests assert what a function does with any input, not how fast: hypothesis's default 200 ms
# deadline per example failed them on a loaded 2-core machine (the suite runs beside builds and other workers).
settings.register_profile("babelforge", deadline=None)
settings.load_profile("babelforge")
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


def pin_test_process() -> dict[str, str]:
    """Pin the CPU as `babelforge <stage>` does with the repo's params.yaml (build.cpu_isa), so a test
    that runs a model in-process gets the kernels of a stage run whether or not an earlier test ran
    the CLI. Without it the libraries pick their kernels from the machine (MKL in CTranslate2 on
    Intel CPUs, AVX-512 where present), and the tiny models' outputs change with the test order."""
    try:
        return pin_cpu(cpu_isa_from_params(load_params(REPO / "params.yaml")))
    except BabelforgeError:  # a CPU without that instruction set: the kernels every x86-64 CPU runs
        return pin_cpu("GENERIC")


PINNED = pin_test_process()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def sib_dir(shared_data) -> Path:
    """SIB-200 `annotated/` in the source mirror."""
    return shared_data / "sib-200" / "annotated"


@pytest.fixture(scope="session")
def tiny_nllb(tmp_path_factory, sib_dir) -> Path:
    """The tiny NLLB-architecture model (HF + CTranslate2 int8), built once per run (tests/shared.py)."""
    from babelforge.translation.tiny import build_tiny_nllb

    return built_once(tmp_path_factory, "tiny-nllb", lambda folder: build_tiny_nllb(folder, sib_dir=sib_dir, seed=0))


@pytest.fixture(autouse=True)
def ray_up_only_where_shared(request):
    """A test marked `local_ray` runs on this process's shared local Ray: the first such test starts
    it (as the runners start one: `ray_init_options`), the next ones find it up and the runners use
    it (`connect_ray`), which saves starting Ray, seconds each time. Every other test starts with no
    Ray up in this process, as one that starts (and shuts down) its own Ray expects."""
    shared = request.node.get_closest_marker("local_ray") is not None
    if shared or "ray" in sys.modules:
        import ray

        if ray.is_initialized() and not shared:
            ray.shutdown()
        elif shared and not ray.is_initialized():
            from babelforge.core.ray_connect import ray_init_options
            from babelforge.core.runner_config import RunnerConfig

            ray.init(**ray_init_options(RunnerConfig(runner="ray", local_cpus=2)))
        if shared:
            every_cpu_free(ray)
    yield


# How long a local_ray test waits for the CPUs an earlier test's actors held. Ray frees a killed actor's
# CPU once its process has gone, which a loaded machine delays; a pool started before that finds no CPU
# for an actor (or for a restarted one: seen once as a retried chunk that never came back).
FREE_CPUS_WAIT_S = 60.0


def every_cpu_free(ray, wait_s: float = FREE_CPUS_WAIT_S) -> None:
    """Return once every CPU of the shared local Ray is free; fail the test in one line if one is still
    held after `wait_s` (an earlier test left an actor alive)."""
    deadline = time.monotonic() + wait_s
    while True:
        total = ray.cluster_resources().get("CPU", 0.0)
        free = ray.available_resources().get("CPU", 0.0)
        if free >= total:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"the shared local Ray still has {total - free:g} of {total:g} CPUs held after {wait_s:g} s")
        time.sleep(0.1)


def _tracked_metrics() -> dict[str, bytes]:
    folder = REPO / "metrics"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


@pytest.fixture(autouse=True)
def environment_restored():
    """os.environ after a test is what it was before: variables a test (or a stage it ran in-process)
    set are removed, changed ones get their old value back. The CPU pin stays as set above."""
    before = dict(os.environ)
    yield
    for name in [name for name in os.environ if name not in before]:
        del os.environ[name]
    for name, value in before.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


@pytest.fixture(autouse=True)
def metrics_folder_untouched():
    """A stage run from a test writes its headline metrics under the test's own folder, never into the
    repo's git-tracked `metrics/` (params.yaml's `paths.metrics` is relative to the working directory)."""
    before = _tracked_metrics()
    yield
    assert _tracked_metrics() == before, "a test wrote into the repo's metrics/: give the stage --metrics <tmp>"


# Fixtures that build a model, run a stage or assemble a dataset (a second or more each, often a
# minute for the first test of a session): a test using one is slow, so the inner loop
# (`-m "not slow"`) leaves it out without each test saying so.
SLOW_FIXTURES = frozenset(
    {
        "tiny_nllb",
        "tiny_translator",
        "tiny_kiwi_dir",
        "tiny_kiwi",
        "tiny_clip_dir",  # tiny models
        "tiny_xlmr_dir",
        "tiny_mclip_dir",
        "tiny_st_dir",
        "open_clip_bpe_dir",
        "open_clip_xlmr_dir",
        "open_clip_nllb_dir",  # tiny models of the other families (tests/eval/conftest.py)
        "built",
        "built_card",
        "senses_built",
        "sample_chain",
        "project",
        "workdir",
        "workspace",  # built stages, projects
        "label_inputs",
        "real_label_inputs",  # the OMW mirror and WordNet for every class (label rules)
        "card_inputs",
        "sample_set",
        "instances",
        "identifier",  # audit, card, MVL-SIB, langid
    }
)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks
def pytest_collection_modifyitems(config, items):
    """Mark the tests that use a slow fixture slow."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_addoption(parser):
    parser.addoption(
        "--record-durations",
        action="store_true",
        help=f"update {schedule.DURATIONS.relative_to(REPO)} with the durations of the tests run (the order's estimates)",
    )


def pytest_configure(config):
    config.pluginmanager.register(TestOrder(config), "babelforge-test-order")


class TestOrder:
    """Runs the longest tests first, spread over the xdist workers (tests/schedule.py), and with
    --record-durations records how long each test took."""

    __test__ = False  # a plugin, not a test class

    def __init__(self, config):
        self.config = config
        self.seconds: dict[str, float] = {}

    @pytest.hookimpl(trylast=True)  # after `-m`/`-k` deselection: the plan is of the tests that run
    def pytest_collection_modifyitems(self, config, items):
        if config.pluginmanager.hasplugin("randomly") and config.getoption("randomly_reorganize", default=False):
            return  # `-p randomly`: its shuffle (done before this hook) is the point of the run
        recorded = schedule.recorded_durations()
        units: dict[str, schedule.Unit] = {}
        for item in items:  # a file's tests: one unit, in the file's order
            unit = units.setdefault(str(item.path), schedule.Unit(str(item.path), 0.0, []))
            slow = item.get_closest_marker("slow") is not None
            unit.seconds += recorded.get(item.nodeid, schedule.UNRECORDED_SLOW if slow else schedule.UNRECORDED_QUICK)
            unit.items.append(item)
        workers = getattr(config, "workerinput", {}).get("workercount", 1)
        items[:] = schedule.planned_order(list(units.values()), workers)

    def pytest_runtest_logreport(self, report):
        if self.config.getoption("record_durations"):
            self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        if not self.config.getoption("record_durations") or hasattr(self.config, "workerinput"):
            return  # the controller writes: it gets every worker's reports
        # a test run now gets its new figure; the others keep theirs (a partial run, `-m "not slow"`,
        # loses nothing), unless their file is gone
        kept = {
            name: s
            for name, s in schedule.recorded_durations().items()
            if name not in self.seconds and (REPO / name.split("::")[0]).is_file()
        }
        merged = schedule.durations_to_record({**kept, **self.seconds})
        schedule.DURATIONS.write_text(json.dumps(merged, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
