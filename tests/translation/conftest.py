"""Shared fixtures: the tiny NLLB model, built once per test session (a few seconds)."""
from __future__ import annotations

import pytest

from builders.translation.tiny import default_sib_dir


@pytest.fixture(scope="session")
def sib_dir():
    path = default_sib_dir()
    if not path.is_dir():
        pytest.skip(f"SIB-200 not found at {path}: the source mirror ../shared/data (or set BABELFORGE_DATA)")
    return path


@pytest.fixture(scope="session")
def tiny_nllb(tmp_path_factory, sib_dir):
    from builders.translation.tiny import build_tiny_nllb

    return build_tiny_nllb(tmp_path_factory.mktemp("tiny-nllb"), seed=0, sib_dir=sib_dir)


@pytest.fixture(scope="session")
def tiny_translator(tiny_nllb):
    from builders.translation.nllb import NllbTranslator

    # Short decoding: the random model rarely emits </s>, and the tests only need the code paths.
    return NllbTranslator(tiny_nllb, device="cpu", beam_size=2, max_decoding_length=24)


@pytest.fixture(scope="session")
def templates():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "resources" / "clip_templates_en.txt"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
