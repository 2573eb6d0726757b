"""Fixtures every test area may use: where the repo and the source mirror are."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA
