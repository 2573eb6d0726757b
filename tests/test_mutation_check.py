"""scripts/mutation_check.py leaves no process of a killed run behind, Ray's included: they put
themselves in sessions of their own, out of reach of the group kill, and carry the run's marker."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def mutation_check():
    spec = importlib.util.spec_from_file_location("mutation_check", REPO / "scripts" / "mutation_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_process_that_left_the_runs_session_is_found_by_its_marker_and_killed():
    check = mutation_check()
    marker = f"BABELFORGE_MUTANT_RUN=test-{os.getpid()}-{time.monotonic_ns()}"
    name, value = marker.split("=", 1)
    # a child that starts a grandchild in a session of its own, as Ray starts its nodes, and exits
    launcher = "import subprocess, sys; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)"
    subprocess.run([sys.executable, "-c", launcher], env={**os.environ, name: value}, check=True, timeout=60)
    left = check.processes_with_setting(marker)
    assert len(left) == 1, left
    (pid,) = left
    assert os.getsid(pid) == pid  # its own session: a kill of the launcher's group would miss it
    assert check.kill_left_behind(marker) == [pid]
    deadline = time.monotonic() + 10
    while check.processes_with_setting(marker) and time.monotonic() < deadline:
        time.sleep(0.05)  # the kill lands; the orphan is reaped by init
    assert check.processes_with_setting(marker) == {}
    assert check.kill_left_behind(marker) == []
