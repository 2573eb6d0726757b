"""Fixtures for the caption tests: the real XTD mirror, a small registry, a stub translator,
and the tiny COMETKiwi checkpoint (built once per run, tests/shared.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from babelforge.translation.nllb import Hypothesis
from tests.shared import built_once

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def xtd_path(shared_data) -> Path:
    return shared_data / "xtd" / "xtd.json"


@pytest.fixture(scope="session")
def registry():
    from babelforge.core.languages import registry as project_registry

    return project_registry()


@pytest.fixture(scope="session")
def xtd(xtd_path, registry):
    from babelforge.captions.formats.xtd import read_xtd

    return read_xtd(xtd_path, "eng_Latn", registry)


class StubTranslator:
    """NLLB's `translate` interface, deterministic: per text and target, hypotheses are the
    human translation when one is known (best), the copied source, a decoder loop, and
    numbered variants; it records every call."""

    def __init__(self, known: dict[tuple[str, str], str] | None = None, num_hypotheses: int = 4):
        self.known = known or {}
        self.num_hypotheses = num_hypotheses
        self.calls: list[tuple[list[str], str, list[str]]] = []

    def translate(self, texts, src_lang, tgt_langs):
        self.calls.append((list(texts), src_lang, list(tgt_langs)))
        out = []
        for text, tgt in zip(texts, tgt_langs):
            candidates = []
            if (text, tgt) in self.known:
                candidates.append(self.known[(text, tgt)])
            first_word = (text.split() or ["x"])[0]
            candidates += [text, " ".join([first_word] * 6)]
            candidates += [f"{tgt} {i} {text[::-1]}" for i in range(self.num_hypotheses)]
            candidates = candidates[: self.num_hypotheses]
            out.append([Hypothesis(c, -0.1 * (rank + 1)) for rank, c in enumerate(candidates)])
        return out


@pytest.fixture()
def stub_translator():
    return StubTranslator


@pytest.fixture(scope="session")
def xtd_corpus(xtd_path) -> list[str]:
    data = json.loads(xtd_path.read_text(encoding="utf-8"))
    return [caption[0] for captions in data["captions"].values() for caption in captions]


@pytest.fixture(scope="session")
def tiny_kiwi_dir(tmp_path_factory, xtd_corpus) -> Path:
    from babelforge.captions.qe import build_tiny_kiwi

    return built_once(
        tmp_path_factory,
        "cometkiwi-tiny",
        lambda folder: build_tiny_kiwi(folder / "cometkiwi-tiny", xtd_corpus, seed=0),
    )


@pytest.fixture(scope="session")
def tiny_kiwi(tiny_kiwi_dir):
    from babelforge.captions.qe import load_kiwi

    model, _ = load_kiwi(str(tiny_kiwi_dir))
    return model
