"""Fixtures for the core tests: the mirror's language lists and a loopback HTTP server.

`shared_data` (the source mirror) comes from tests/conftest.py. The server is
`tests.loopback.LoopbackServer` over the mirror (its failure modes are described there).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.loopback import LoopbackServer, serving


@pytest.fixture(scope="session")
def babel_languages(shared_data) -> list[dict[str, str]]:
    path = shared_data / "languages" / "babel_imagenet_languages.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@pytest.fixture(scope="session")
def sib_codes(shared_data) -> list[str]:
    return (shared_data / "languages" / "flores200_sib_codes.txt").read_text(encoding="utf-8").split()


@pytest.fixture(scope="session")
def mirror(shared_data) -> Path:
    return shared_data


@pytest.fixture
def server(mirror):
    """A loopback HTTP server over the real mirror, shut down after the test."""
    with serving(LoopbackServer(mirror)) as httpd:
        yield httpd


@pytest.fixture
def fast_policy():
    """Retries with millisecond back-off and short timeouts, so failure tests run fast."""
    from babelforge.core.http import RetryPolicy

    return RetryPolicy(attempts=3, base_delay=0.001, max_delay=0.01, max_retry_after=30, timeout=5)


@pytest.fixture
def sleeps():
    """A recording stand-in for time.sleep: the test sees each delay without waiting."""
    recorded: list[float] = []
    recorded_sleep = recorded.append
    return recorded, recorded_sleep
