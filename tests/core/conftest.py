"""Fixtures for the core tests: the source mirror beside the repo and the registry file."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the source mirror is missing: expected it at {SHARED_DATA} (../shared/data beside the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def babel_languages(shared_data) -> list[dict[str, str]]:
    path = shared_data / "languages" / "babel_imagenet_languages.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="session")
def sib_codes(shared_data) -> list[str]:
    return (shared_data / "languages" / "flores200_sib_codes.txt").read_text(encoding="utf-8").split()
