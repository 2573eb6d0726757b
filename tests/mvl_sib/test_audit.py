"""MVL-SIB's audit section (builders/mvl_sib/audit.py): rows and balance per task and language."""

import pandas as pd

from babelforge.mvl_sib import audit


def test_mvl_sib_summary():
    tasks = {"i2s_k1": [{"label": i % 4, "topic": "sports" if i % 2 else "travel"} for i in range(8)]}
    mvl = audit.mvl_sib_summary(tasks)["tasks"]["i2s_k1"]
    assert mvl["rows"] == 8 and mvl["label_balance"]["max_min_ratio"] == 1.0
    assert mvl["topic_balance"]["counts"] == {"sports": 4, "travel": 4}
    assert audit.balance([]) == {"counts": {}, "max_min_ratio": None}


def test_the_section_per_language_and_its_overview(tmp_path):
    assert audit.mvl_sib(tmp_path / "missing") is None
    for task, rows in (("i2s_k1", 12), ("s2t", 8)):
        (tmp_path / task).mkdir()
        for lang in ("fin_Latn", "jpn_Jpan")[: 2 if task == "i2s_k1" else 1]:
            pd.DataFrame(
                {"label": [0, 1, 2, 3] * (rows // 4), "topic": ["a", "b"] * (rows // 2), "sentence": ["s"] * rows}
            ).to_parquet(tmp_path / task / f"{lang}.parquet")
    section = audit.mvl_sib(tmp_path)
    assert section.language("fin_Latn")["tasks"]["s2t"]["rows"] == 8
    assert set(section.language("jpn_Jpan")["tasks"]) == {"i2s_k1"}
    assert section.language("rus_Cyrl") == {"status": "language not in MVL-SIB"}
    overview = section.overview()["tasks"]
    assert overview["i2s_k1"] == {"languages": 2, "rows_min": 12, "rows_max": 12, "balanced": True}
    assert overview["s2t"]["languages"] == 1
