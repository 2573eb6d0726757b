"""`babelforge review export LANG --sample N --seed S`: a random sample stratified by source."""

from collections import Counter

from babelforge.audit.review_sheet import sample_rows


def _rows(counts):
    rows, idx = [], 0
    for source, n in counts.items():
        for _ in range(n):
            rows.append({"class_idx": idx, "source": source, "label": f"l{idx}"})
            idx += 1
    return rows


def test_sample_is_stratified_by_source():
    rows = _rows({"omw:msa": 242, "wikt": 109})
    drawn = sample_rows(rows, 50, seed=7)
    assert len(drawn) == 50 and len({r["class_idx"] for r in drawn}) == 50
    # 242/351 and 109/351 of 50: 34.47 and 15.53; the one left over goes to the larger remainder
    assert Counter(r["source"] for r in drawn) == {"omw:msa": 34, "wikt": 16}
    assert [r["class_idx"] for r in drawn] == sorted(r["class_idx"] for r in drawn)


def test_sample_depends_on_the_seed_only():
    rows = _rows({"a": 30, "b": 20, "c": 3})
    assert sample_rows(rows, 10, seed=1) == sample_rows(list(reversed(rows)), 10, seed=1)
    assert sample_rows(rows, 10, seed=1) != sample_rows(rows, 10, seed=2)


def test_sample_larger_than_the_language_is_every_row():
    rows = _rows({"a": 4, "b": 2})
    assert sample_rows(rows, 100, seed=0) == rows
    assert sample_rows([], 10, seed=0) == []  # every class reviewed already
