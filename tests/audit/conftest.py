"""Crafted label sets for the audit: a tiny registry, labels with known defects, a params file.

Class names and indices are the real ImageNet-1k ones (resources/imagenet1k_classes.tsv);
the labels of the other languages are written here so every check has a row it must flag.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.registry import write_registry as write_test_registry

REPO = Path(__file__).resolve().parents[2]
CLASSES = REPO / "resources" / "imagenet1k_classes.tsv"

REGISTRY_ROWS = [
    ("eng_Latn", "English", "eng", "Latn", "Latn", "en", "EN", "eng", "eng_Latn", "en"),
    ("fin_Latn", "Finnish", "fin", "Latn", "Latn", "fi", "FI", "fin", "fin_Latn", "fi"),
    ("rus_Cyrl", "Russian", "rus", "Cyrl", "Cyrl", "ru", "RU", "rus", "rus_Cyrl", "ru"),
    ("jpn_Jpan", "Japanese", "jpn", "Jpan", "Hani,Hira,Kana", "ja", "JA", "jpn", "jpn_Jpan", "ja"),
    ("kmr_Latn", "Kurdish (Kurmanji)", "kmr", "Latn", "Latn", "ku", "KU", "kmr", "kmr_Latn", ""),
]

# fin_Latn: every check has a target row.
FIN_LABELS = {
    0: "suutari",
    1: "золотая рыбка",  # Cyrillic in a Latin-script language -> script_mismatch
    2: "hai",  # 2 and 3 share a label -> duplicate
    3: "Hai",
    4: "Hammer-head Shark",  # English 'hammerhead shark' once case and '-' go -> english_lookalike
    5: "sähkörausku <b>&amp;</b>",  # markup characters: must be escaped on the page
    6: "rausku ",  # trailing space -> empty_label
    7: "kukko",
    8: "kana",
    9: "Strauß",  # looks odd, is fine: no check may flag it
}
RUS_LABELS = {0: "линь", 1: "золотая рыбка", 2: "большая белая акула", 3: "tench", 4: "акула-молот"}
JPN_LABELS = {0: "テンチ", 1: "金魚", 2: "ホホジロザメ", 3: "イタチザメ", 4: "シュモクザメ"}
KMR_LABELS = {0: "masî", 1: "ماسی", 2: "şûr"}  # Arabic-script (Sorani) label in Kurmanji


def clip_names() -> dict[int, str]:
    with CLASSES.open(encoding="utf-8", newline="") as handle:
        return {int(row["class_idx"]): row["openai_clip_name"] for row in csv.DictReader(handle, delimiter="\t")}


def write_registry(path: Path) -> Path:
    return write_test_registry(path, REGISTRY_ROWS, {"in_eval_100": "False"})


def labels_table(per_language: dict[str, dict[int, str]], source: str = "wikt") -> pd.DataFrame:
    names = clip_names()
    wnids = {}
    with CLASSES.open(encoding="utf-8", newline="") as handle:
        wnids = {int(row["class_idx"]): row["wnid"] for row in csv.DictReader(handle, delimiter="\t")}
    rows = []
    for lang, labels in per_language.items():
        for idx, label in labels.items():
            rows.append(
                {
                    "class_idx": idx,
                    "wnid": wnids[idx],
                    "lang": lang,
                    "label": label,
                    "source": "clip" if lang == "eng_Latn" else source,
                    "rank": 0,
                    "n_dropped_english": 1 if idx % 2 else 0,
                    "n_dropped_mt": 0,
                    "n_dropped_low_precision": 0,
                    "is_duplicate": False,
                }
            )
    frame = pd.DataFrame(rows)
    # the labels stage's own duplicate flag (exact label match within a language)
    frame["is_duplicate"] = frame.duplicated(["lang", "label"], keep=False)
    assert names  # the English names come from the same class list
    return frame


def crafted_labels() -> dict[str, dict[int, str]]:
    names = clip_names()
    return {
        "eng_Latn": {idx: names[idx] for idx in range(30)},
        "fin_Latn": FIN_LABELS,
        "rus_Cyrl": RUS_LABELS,
        "jpn_Jpan": JPN_LABELS,
        "kmr_Latn": KMR_LABELS,
    }


def wordnet_table() -> pd.DataFrame:
    names = clip_names()
    return pd.DataFrame(
        [
            {
                "class_idx": idx,
                "wnid": f"n{idx:08d}",
                "synset": f"{idx:08d}-n",
                "synset_name": f"c{idx}.n.01",
                "lemmas": [names[idx].replace(" ", "_"), f"Lemma_{idx}"],
                "definition": f"definition of {names[idx]} <&>",
                "hypernym_path": ["entity.n.01"],
            }
            for idx in range(30)
        ]
    )


def audit_params(tmp: Path, **overrides) -> dict:
    """params.yaml with every input and output path in `tmp` and `audit` settings overridden."""
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["paths"].update(
        labels=str(tmp / "labels.parquet"),
        languages=str(tmp / "languages.parquet"),
        wordnet=str(tmp / "wordnet.parquet"),
        prompts=str(tmp / "prompts.parquet"),
        captions=str(tmp),
        mvl_sib=str(tmp / "mvl_sib"),
        audit=str(tmp / "reports" / "audit"),
        candidates=str(tmp / "candidates.parquet"),
    )
    params["audit"].update({"reference": None, **overrides})
    return params


def audit_config(tmp: Path, **overrides):
    from babelforge.audit.audit_stage import Config
    from babelforge.core.config import load_config

    return load_config(Config, audit_params(tmp, **overrides))


@pytest.fixture
def label_inputs(tmp_path: Path) -> Path:
    """labels.parquet, languages.parquet, wordnet.parquet and a registry in tmp_path."""
    return write_label_inputs(tmp_path)


def write_label_inputs(tmp_path: Path) -> Path:
    """What the audit reads of the labels: labels.parquet, languages.parquet, wordnet.parquet and a registry."""
    labels = labels_table(crafted_labels())
    labels.to_parquet(tmp_path / "labels.parquet", index=False)
    counts = labels.groupby("lang").size()
    pd.DataFrame({"lang": counts.index, "n_classes": counts.values, "group": ["very-low"] * len(counts)}).to_parquet(
        tmp_path / "languages.parquet", index=False
    )
    wordnet_table().to_parquet(tmp_path / "wordnet.parquet", index=False)
    write_registry(tmp_path / "languages.tsv")
    return tmp_path


def stub_langid(text: str) -> tuple[str, float]:
    """A deterministic langid: Cyrillic -> ru, kana/Han -> ja, Arabic -> fa, else 'en' with
    high confidence for long strings (so a long English-looking label is a confident miss)."""
    if any("\u0400" <= ch <= "\u04ff" for ch in text):
        return "ru", 0.99
    if any("\u3040" <= ch <= "\u9fff" for ch in text):
        return "ja", 0.99
    if any("\u0600" <= ch <= "\u06ff" for ch in text):
        return "fa", 0.99
    return ("fi", 0.6) if len(text) < 8 else ("en", 0.95)


def stub_rank(text: str) -> list[tuple[str, float]]:
    """`stub_langid` as a langid ranking (its top language only)."""
    return [stub_langid(text)]
