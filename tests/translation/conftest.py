"""Translation fixtures: a translator over the tiny NLLB model (tests/conftest.py builds it)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_translator(tiny_nllb):
    from babelforge.translation.nllb import NllbTranslator

    # Short decoding: the random model rarely emits </s>, and the tests only need the code paths.
    return NllbTranslator(tiny_nllb, device="cpu", beam_size=2, max_decoding_length=24)


@pytest.fixture(scope="session")
def templates():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "resources" / "clip_templates_en.txt"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
