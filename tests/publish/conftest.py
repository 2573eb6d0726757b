"""A built card folder from crafted labels whose sources span every licence family, with
licences read from the real OMW mirror (../shared/data/omw)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from babelforge.core.datasets import spec
from babelforge.core.io import write_table
from babelforge.core.languages import read_registry
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths
from babelforge.publish.card_stage import build_card
from tests.audit.conftest import labels_table, write_registry

REPO = Path(__file__).resolve().parents[2]
OMW_DIR = (REPO / ".." / "shared" / "data" / "omw").resolve()

# per language: labels and the source each row claims
LABELS = {
    "eng_Latn": ({0: "tench", 1: "goldfish", 2: "great white shark"}, "clip"),
    "fin_Latn": ({0: "suutari", 1: "kultakala", 2: "valkohai"}, "omw:fin"),
    "rus_Cyrl": ({0: "линь", 1: "золотая рыбка"}, "wikt"),
    "jpn_Jpan": ({0: "テンチ", 1: "金魚"}, "cldr"),
    "kmr_Latn": ({0: "masî", 1: "masiyê zêrîn"}, "WIKI"),  # a BabelNet source
}


def crafted_labels() -> pd.DataFrame:
    return pd.concat(
        [labels_table({lang: labels}, source=source) for lang, (labels, source) in LABELS.items()], ignore_index=True
    )


def card_paths(tmp: Path) -> Paths:
    """Every artifact of the cards under `tmp` (MT captions: tmp/selected.parquet), OMW from the mirror."""
    return Paths(
        hub=str(tmp / "build" / "hub"),
        omw=str(OMW_DIR),
        audit=str(tmp / "reports" / "audit"),
        labels=str(tmp / "labels.parquet"),
        languages=str(tmp / "languages.parquet"),
        prompts=str(tmp / "prompts.parquet"),
        captions=str(tmp),
        mvl_sib=str(tmp / "mvl_sib"),
        wordnet=str(tmp / "wordnet.parquet"),
        releases=str(tmp / "releases"),
        xm3600=str(tmp / "xm3600"),
    )


def build(dataset: str, tmp: Path) -> Path:
    """`babelforge card <dataset>` over the artifacts under `tmp`."""
    return build_card(spec(dataset), card_paths(tmp), read_registry(tmp / "languages.tsv"))


@pytest.fixture
def card_inputs(tmp_path: Path) -> Path:
    if not OMW_DIR.is_dir():
        pytest.fail(f"the source mirror is missing: expected OMW data at {OMW_DIR}")
    labels = crafted_labels()
    record = provenance("labels", {"min_classes": 10}, {"omw": {"version": "1.4", "sha256": "0" * 64}})
    write_table(labels, tmp_path / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    write_registry(tmp_path / "languages.tsv")
    return tmp_path


@pytest.fixture
def built_card(card_inputs: Path) -> Path:
    return build("babel-imagenet", card_inputs)
