"""MVL-SIB's audit section (builders/mvl_sib/audit_section.py): rows and balance per task and language."""

import pandas as pd

from babelforge.core.io import read_table, write_table
from babelforge.mvl_sib import audit_section as audit


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
    assert list(section.languages()) == ["fin_Latn", "jpn_Jpan"]


def test_a_language_is_counted_by_arrow_as_the_summary_of_its_rows(tmp_path):
    """The section counts each task file's columns with Arrow, never making a row a Python
    object; what it finds equals `mvl_sib_summary` of the rows as pandas reads them (what it
    computed before): nulls, a nullable integer column, a `category` topic column, a task without
    a balanced column, an empty task, files with and without pandas' metadata."""
    tables = {
        "i2s_k1": pd.DataFrame({"label": [0, 1, 2, 3, 3, 1], "topic": ["a", "b", None, "a", "a", "b"]}),
        "s2t": pd.DataFrame({"label": pd.array([0, 1, None, 1], dtype="Int64"), "category": ["x", "y", "x", "x"]}),
        "t2s": pd.DataFrame({"sentence_ids": [[1, 2], [3]], "sentence": ["s", "t"]}),
        "s2i": pd.DataFrame({"label": pd.Series([], dtype="int8"), "topic": pd.Series([], dtype=object)}),
        "i2s_k3": pd.DataFrame({"label": [2.0, None, 2.0], "topic": ["a", "a", "b"]}),
    }
    for task, table in tables.items():
        (tmp_path / task).mkdir()
        table.to_parquet(tmp_path / task / "fin_Latn.parquet")
        write_table(table, tmp_path / task / "rus_Cyrl.parquet")  # as the mvl_sib stage writes: no pandas metadata
    section = audit.mvl_sib(tmp_path)
    for lang in ("fin_Latn", "rus_Cyrl"):
        paths = {task: tmp_path / task / f"{lang}.parquet" for task in tables}
        rows = {task: read_table(path, audit._balance_columns(path)).to_dict("records") for task, path in paths.items()}
        assert section.language(lang) == audit.mvl_sib_summary(rows), lang
    found = section.language("fin_Latn")["tasks"]
    assert found["i2s_k1"]["label_balance"]["counts"] == {"0": 1, "1": 2, "2": 1, "3": 2}
    assert found["t2s"] == {"rows": 2} and found["s2i"] == {"rows": 0}
