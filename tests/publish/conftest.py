"""A built card folder from crafted labels whose sources span every licence family, with
licences read from the real OMW mirror (../shared/data/omw)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from builders.core.io import write_table
from builders.core.languages import read_registry
from builders.core.provenance import provenance
from builders.publish.card_stage import build_card
from tests.audit.conftest import labels_table, write_registry

REPO = Path(__file__).resolve().parents[2]
OMW_DIR = (REPO / ".." / "shared" / "data" / "omw").resolve()

# per language: labels and the source each row claims
LABELS = {
    "eng_Latn": ({0: "tench", 1: "goldfish", 2: "great white shark"}, "clip"),
    "fin_Latn": ({0: "suutari", 1: "kultakala", 2: "valkohai"}, "omw:fin"),
    "rus_Cyrl": ({0: "линь", 1: "золотая рыбка"}, "wikt"),
    "jpn_Jpan": ({0: "テンチ", 1: "金魚"}, "cldr"),
    "kmr_Latn": ({0: "masî", 1: "masiyê zêrîn"}, "WIKI"),     # a BabelNet source
}


def crafted_labels() -> pd.DataFrame:
    return pd.concat([labels_table({lang: labels}, source=source) for lang, (labels, source) in LABELS.items()],
                     ignore_index=True)


def card_config(tmp: Path) -> dict:
    return {
        "out": str(tmp / "build" / "hub"),
        "omw_dir": str(OMW_DIR),
        "audit_summary": str(tmp / "reports" / "audit" / "summary.json"),
        "babel_imagenet": {"labels": str(tmp / "labels.parquet"), "languages": str(tmp / "languages.parquet")},
        "mvl_sib": {"dir": str(tmp / "mvl_sib")},
    }


@pytest.fixture
def card_inputs(tmp_path: Path) -> Path:
    if not OMW_DIR.is_dir():
        pytest.fail(f"the source mirror is missing: expected OMW data at {OMW_DIR}")
    labels = crafted_labels()
    record = provenance("labels", {"min_classes": 10}, {"omw": {"version": "1.4", "sha256": "0" * 64}})
    write_table(labels, tmp_path / "labels.parquet", sort_by=["lang", "class_idx"], provenance=record)
    counts = labels.groupby("lang").size()
    pd.DataFrame({"lang": counts.index, "n_classes": counts.values, "group": "very-low"}).to_parquet(
        tmp_path / "languages.parquet")
    write_registry(tmp_path / "languages.tsv")
    return tmp_path


@pytest.fixture
def built_card(card_inputs: Path) -> Path:
    return build_card("babel-imagenet", card_config(card_inputs), read_registry(card_inputs / "languages.tsv"))
