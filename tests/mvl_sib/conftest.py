"""Fixtures for the MVL-SIB tests: the real SIB-200 mirror and small crafted copies of it."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The mirror lies at ../shared/data beside the repo; a git worktree one level deeper
# (…/wt/<branch>) finds it one level further up.
MIRROR_CANDIDATES = [REPO.parent / "shared" / "data", REPO.parent.parent / "shared" / "data"]


def find_sib_dir() -> Path | None:
    for candidate in MIRROR_CANDIDATES:
        sib = candidate / "sib-200" / "annotated"
        if sib.is_dir():
            return sib.resolve()
    return None


@pytest.fixture(scope="session")
def sib_dir() -> Path:
    found = find_sib_dir()
    if found is None:
        pytest.fail(f"SIB-200 mirror missing: expected sib-200/annotated under one of {MIRROR_CANDIDATES}")
    return found


@pytest.fixture(scope="session")
def corpus(sib_dir):
    from builders.mvl_sib.sib200 import read_corpus

    return read_corpus(sib_dir)


@pytest.fixture
def small_sib(tmp_path, sib_dir) -> Path:
    """A writable copy of three real languages (one with quoted rows and leading spaces)."""
    target = tmp_path / "annotated"
    for code in ("eng_Latn", "fra_Latn", "ace_Arab"):
        shutil.copytree(sib_dir / code, target / code)
    return target


@pytest.fixture(scope="session")
def images_by_topic() -> dict[str, list[str]]:
    from builders.mvl_sib.images import topic_slug
    from builders.mvl_sib.sib200 import TOPICS

    return {topic: [f"{topic_slug(topic)}-{n:02d}" for n in range(10)] for topic in TOPICS}


@pytest.fixture(scope="session")
def instances(corpus, images_by_topic):
    from builders.mvl_sib.assemble import SamplingConfig, sample_instances

    return sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, SamplingConfig(seed=7))
