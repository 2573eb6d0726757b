"""The MT captions' audit section (builders/captions/audit_section.py): per-language summary and Kiwi box plot."""

import numpy as np
import pandas as pd
import pytest
from matplotlib import cbook

from babelforge.captions import audit_section as audit
from babelforge.core.errors import BabelforgeError


def test_percentiles_match_numpy():
    values = [0.1, 0.5, 0.2, 0.9, 0.75, 0.33, 0.61]
    ours = audit.percentiles(values, (10, 25, 50, 90))
    for point in (10, 25, 50, 90):
        assert ours[f"p{point}"] == pytest.approx(np.percentile(values, point), abs=1e-4)
    assert audit.percentiles([]) == {}


def test_caption_summary():
    # a kept translation's reason is missing: None, or NaN as pandas reads a null of a string column
    captions = {
        "kiwi": [0.2, 0.8, 0.5, float("nan")],
        "chrf": [40.0, float("nan"), 60.0, float("nan")],
        "reason": [None, float("nan"), None, "rejected:langid=8,script=3"],
    }
    caption = audit.caption_summary(4, captions, "kiwi", "chrf")
    assert (
        caption["captions"] == 4
        and audit.caption_summary(0, {}, "kiwi", "chrf")["status"] == "no captions for this language"
    )
    assert caption["not_translated"] == {"rejected": 1}
    assert caption["kiwi_percentiles"]["p50"] == 0.5 and caption["chrf"] == {"with_reference": 2, "mean": 50.0}


def test_the_caption_section_reads_each_language_alone_and_plots_box_statistics(tmp_path, monkeypatch):
    """A language's summary from its own rows (only the columns the checks use) is the summary
    of that language's part of the whole table; the Kiwi plot's boxes are matplotlib's statistics of
    its scores, missing scores left out, taken from the summary's read of each language."""
    reads = []
    original = audit.read_table
    monkeypatch.setattr(
        audit,
        "read_table",
        lambda path, columns=None, where=None: reads.append(where[1]) or original(path, columns, where),
    )

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        [
            {
                "caption_id": f"c{i}",
                "lang": lang,
                "text": "t",
                "kiwi_score": float(rng.random()),
                "chrf": float(rng.random() * 100),
                "reason": None,
            }
            for i in range(40)
            for lang in ("fin_Latn", "rus_Cyrl")
        ]
    )
    frame.loc[3, ["kiwi_score", "chrf", "reason"]] = [None, None, "empty: all hypotheses dropped"]
    frame.to_parquet(tmp_path / "selected.parquet", row_group_size=16)
    section = audit.captions(tmp_path / "selected.parquet")
    for lang in ("fin_Latn", "rus_Cyrl"):
        part = frame[frame["lang"] == lang]
        assert section.language(lang) == audit.caption_summary(len(part), part.to_dict("list"), "kiwi_score", "chrf")
    assert reads == ["fin_Latn", "rus_Cyrl"]  # one read per language
    assert section.language("rus_Cyrl")["not_translated"] == {"empty": 1}
    assert section.language("jpn_Jpan") == {"status": "no captions for this language"}
    reads.clear()
    boxes = section.distribution()
    assert reads == []  # both languages were read for their summaries already
    scores = frame.loc[frame["lang"] == "rus_Cyrl", "kiwi_score"].dropna().to_numpy()
    expected = cbook.boxplot_stats(scores, labels=["rus_Cyrl"])[0]
    assert {key: boxes["rus_Cyrl"][key] for key in ("q1", "med", "q3", "whislo", "whishi", "label")} == {
        key: expected[key] for key in ("q1", "med", "q3", "whislo", "whishi", "label")
    }
    assert sorted(boxes) == ["fin_Latn", "rus_Cyrl"] and boxes["rus_Cyrl"]["fliers"] == []
    frame.drop(columns="lang").to_parquet(tmp_path / "nolang.parquet")
    with pytest.raises(BabelforgeError, match="no `lang` column"):
        audit.captions(tmp_path / "nolang.parquet")
