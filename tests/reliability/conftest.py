"""One small built workspace per run (tests/reliability/workspace.py), copied per session, and a loopback mirror."""

from __future__ import annotations

import pytest

from tests.loopback import LoopbackServer, serving
from tests.reliability.workspace import MIRROR, Workspace, build_workspace, copy_workspace
from tests.shared import built_once


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    if not MIRROR.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {MIRROR} (../shared/data beside the repo)")
    # Built once per run (tests/shared.py); each worker gets its own copy, as a case's check that
    # nothing appeared in the workspace must not see a case running on another worker.
    built = built_once(tmp_path_factory, "reliability-workspace", lambda folder: build_workspace(folder).root)
    return copy_workspace(Workspace(built), tmp_path_factory.mktemp("reliability") / "workspace")


@pytest.fixture
def workspace_copy(workspace, tmp_path):
    """A copy of the built workspace a test may break, kill or rebuild."""
    return copy_workspace(workspace, tmp_path / "workspace")


@pytest.fixture(scope="session")
def mirror_server():
    with serving(LoopbackServer(MIRROR)) as server:
        server.hang_seconds = 5
        yield server
