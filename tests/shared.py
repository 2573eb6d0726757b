"""Something expensive built once per test run and shared by every pytest-xdist worker.

Each xdist worker is a pytest session of its own, so a session fixture that builds a model or a
workspace runs once per worker: on two workers, twice. `built_once` builds it once per run instead:
the first worker to ask builds it into the run's temp folder (the parent of the workers' own
temp folders, as pytest-xdist's documentation suggests), under a file lock; the others wait for
the lock and find it built. Without xdist it builds into the session's own temp folder.

A shared build is read by every worker at once: a test that changes, kills or rebuilds what it
got takes a copy first (as the fixtures over it do).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def run_temp_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp folder of this test run: shared by its xdist workers, this session's alone without
    xdist (the parent of a lone session's folder holds earlier runs' folders: never shared)."""
    base = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    # a pytest started by a test inherits the variable, not the worker's folder: its own is no popen-gw*
    return base.parent if worker and base.name == f"popen-{worker}" else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """`build(folder)` run once per test run, for every worker; returns the path it returned.

    `folder` does not exist yet when `build` is called. A build that raised is tried again by
    the next worker that asks (and fails there too, with its own error)."""
    root = run_temp_folder(tmp_path_factory)
    folder, done = root / f"shared-{name}", root / f"shared-{name}.done"
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a build that raised left
            done.write_text(str(build(folder)), encoding="utf-8")
    return Path(done.read_text(encoding="utf-8"))
