"""Fixtures for the core tests: the mirror's language lists (`shared_data` comes from tests/conftest.py)."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def babel_languages(shared_data) -> list[dict[str, str]]:
    path = shared_data / "languages" / "babel_imagenet_languages.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="session")
def sib_codes(shared_data) -> list[str]:
    return (shared_data / "languages" / "flores200_sib_codes.txt").read_text(encoding="utf-8").split()
