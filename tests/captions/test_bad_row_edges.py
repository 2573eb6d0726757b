"""The edges of the bad-row policy one-line bugs would move: the max_bad_fraction boundary, a boolean
id, the policy a reader uses when no quarantine is handed in, a row with more fields than its header
(each assertion here failed a plausible one-line mutant of babelforge.core.bad_rows or the readers)."""

from __future__ import annotations

import json

import pytest

from babelforge.captions.input_config import InputConfig
from babelforge.captions.readers import stream_captions
from babelforge.core.bad_rows import BadRow, BadRowPolicy, Quarantine, id_problem
from babelforge.core.errors import BabelforgeError


def quarantine_of(policy: BadRowPolicy, good: int, bad: int) -> Quarantine:
    quarantine = Quarantine(policy, "captions")
    for _ in range(good):
        quarantine.keep()
    for line in range(bad):
        quarantine.add(BadRow("captions.csv", line + 2, "   ", "empty_caption"))
    return quarantine


def test_max_bad_fraction_allows_exactly_that_share_and_stops_above_it():
    quarantine_of(BadRowPolicy("skip", 0.25), good=3, bad=1).check_fraction()  # 1 of 4: exactly the share
    with pytest.raises(
        BabelforgeError, match=r"2 of 5 captions are bad \(empty_caption 2\), more than max_bad_fraction 0.25"
    ):
        quarantine_of(BadRowPolicy("skip", 0.25), good=3, bad=2).check_fraction()


def test_max_bad_fraction_zero_passes_a_clean_input_and_stops_at_one_bad_row():
    quarantine_of(BadRowPolicy("skip", 0.0), good=5, bad=0).check_fraction()
    with pytest.raises(BabelforgeError, match="1 of 6 captions are bad"):
        quarantine_of(BadRowPolicy("skip", 0.0), good=5, bad=1).check_fraction()


def test_a_boolean_id_is_a_bad_id_though_python_counts_it_an_integer():
    assert id_problem(True) == "bad_id" and id_problem(False) == "bad_id"
    assert id_problem(7) is None and id_problem("c7") is None


def test_a_boolean_id_in_jsonl_is_quarantined_as_bad_id(tmp_path, registry):
    path = tmp_path / "captions.jsonl"
    rows = [{"id": f"c{i}", "image": f"{i}.jpg", "caption": f"a dog number {i}"} for i in range(4)]
    rows.insert(2, {"id": True, "image": "t.jpg", "caption": "an id that is a boolean"})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    quarantine = Quarantine(BadRowPolicy("skip", 1.0), "captions")
    kept = [
        r
        for t in stream_captions(InputConfig(format="table", path=str(path)), registry, quarantine=quarantine)
        for r in t.column("caption_id").to_pylist()
    ]
    assert kept == ["c0", "c1", "c2", "c3"]
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(3, "bad_id")]


def test_stream_captions_without_a_quarantine_uses_the_configured_policy(tmp_path, registry):
    """captions_plan's warm-up reads the input so: a skip policy must skip there too, not stop."""
    path = tmp_path / "captions.csv"
    lines = ["id,image,caption", *(f"c{i},{i}.jpg,a dog number {i}" for i in range(9)), "blank,b.jpg,   "]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    skipping = InputConfig(format="table", path=str(path), on_bad_row="skip", max_bad_fraction=0.5)
    kept = [
        caption_id
        for table in stream_captions(skipping, registry)
        for caption_id in table.column("caption_id").to_pylist()
    ]
    assert kept == [f"c{i}" for i in range(9)]
    failing = InputConfig(format="table", path=str(path), on_bad_row="fail", max_bad_fraction=0.5)
    with pytest.raises(BabelforgeError, match=r"captions.csv:11: .*on_bad_row is fail"):
        list(stream_captions(failing, registry))


def test_a_row_with_more_fields_than_the_header_is_a_ragged_row(tmp_path, registry):
    path = tmp_path / "captions.csv"
    path.write_text(
        "id,image,caption\nc0,0.jpg,a dog\nc1,1.jpg,a cat,and a stray field\nc2,2.jpg,a bird\nc3,3.jpg\n",
        encoding="utf-8",
    )
    quarantine = Quarantine(BadRowPolicy("skip", 1.0), "captions")
    tables = list(stream_captions(InputConfig(format="table", path=str(path)), registry, quarantine=quarantine))
    assert [r for t in tables for r in t.column("caption_id").to_pylist()] == ["c0", "c2"]
    assert [(row.line, row.reason) for _, row in quarantine.bad] == [(3, "ragged_row"), (5, "ragged_row")]
