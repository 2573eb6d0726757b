"""Fixtures for the MVL-SIB tests: the real SIB-200 mirror and small crafted copies of it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def corpus(sib_dir):
    from babelforge.mvl_sib.sib200 import read_corpus

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
    from babelforge.mvl_sib.images import topic_slug
    from babelforge.mvl_sib.sib200 import TOPICS

    return {topic: [f"{topic_slug(topic)}-{n:02d}" for n in range(10)] for topic in TOPICS}


@pytest.fixture(scope="session")
def instances(corpus, images_by_topic):
    from babelforge.mvl_sib.assemble import SamplingConfig, sample_instances

    return sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, SamplingConfig(seed=7))
