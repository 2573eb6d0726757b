"""One small built workspace per session (tests/reliability/workspace.py) and a loopback mirror."""

from __future__ import annotations

import pytest

from tests.loopback import LoopbackServer, serving
from tests.reliability.workspace import MIRROR, build_workspace, copy_workspace


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    if not MIRROR.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {MIRROR} (../shared/data beside the repo)")
    return build_workspace(tmp_path_factory.mktemp("reliability") / "workspace")


@pytest.fixture
def workspace_copy(workspace, tmp_path):
    """A copy of the built workspace a test may break, kill or rebuild."""
    return copy_workspace(workspace, tmp_path / "workspace")


@pytest.fixture(scope="session")
def mirror_server():
    with serving(LoopbackServer(MIRROR)) as server:
        server.hang_seconds = 5
        yield server
