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


@pytest.fixture(scope="session")
def sib_dir(shared_data) -> Path:
    """SIB-200 `annotated/` in the source mirror."""
    return shared_data / "sib-200" / "annotated"


@pytest.fixture(scope="session")
def tiny_nllb(tmp_path_factory, sib_dir) -> Path:
    """The tiny NLLB-architecture model (HF + CTranslate2 int8), built once per session."""
    from babelforge.translation.tiny import build_tiny_nllb

    return build_tiny_nllb(tmp_path_factory.mktemp("tiny-nllb"), sib_dir=sib_dir, seed=0)


def _tracked_metrics() -> dict[str, bytes]:
    folder = REPO / "metrics"
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


@pytest.fixture(autouse=True)
def metrics_folder_untouched():
    """A stage run from a test writes its headline metrics under the test's own folder, never into the
    repo's git-tracked `metrics/` (params.yaml's `paths.metrics` is relative to the working directory)."""
    before = _tracked_metrics()
    yield
    assert _tracked_metrics() == before, "a test wrote into the repo's metrics/: give the stage --metrics <tmp>"
