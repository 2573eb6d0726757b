"""The review sheet: export rows, read back what a spreadsheet saved, merge into a review file."""

import csv
import io

import pytest

from babelforge.audit.review_sheet import (
    SHEET_COLUMNS,
    merge_reviews,
    read_sheet,
    render_sheet,
    sheet_reviews,
    sheet_rows,
)
from babelforge.babel_imagenet.reviews import Review, ReviewContext
from babelforge.core.errors import BabelforgeError

TENCH, GOLDFISH, BOW_TIE = "n01440764", "n01443537", "n02883205"
CONTEXT = ReviewContext(
    frozenset({TENCH, GOLDFISH, BOW_TIE}), frozenset({"tench", "goldfish", "bow tie"}), {"deu_Latn": ("Latn",)}
)
LABELS = [
    {"class_idx": 457, "wnid": BOW_TIE, "label": "Fliege", "source": "wikt", "reviewed": False},
    {
        "class_idx": 0,
        "wnid": TENCH,
        "label": "Schleie",
        "source": "wikt",
        "reviewed": True,
        "review_decision": "accept",
        "reviewer": "anna",
        "review_date": "2025-01-14",
        "review_stale": True,
        "rule_label": "Schlei",
    },
]
CANDIDATES = {
    0: [
        {"label": "Schleie", "source": "wikt", "set_aside": "", "chosen": True, "agreement": 2},
        {"label": "Schlei", "source": "omw:odenet", "set_aside": "not_first", "chosen": False, "agreement": 1},
        {"label": "Tench", "source": "wikt", "set_aside": "english", "chosen": False, "agreement": 1},
    ]
}
ENGLISH = {0: {"name": "tench", "definition": "freshwater dace-like game fish"}, 457: {"name": "bow tie"}}


def exported():
    rows = sheet_rows("deu_Latn", LABELS, CANDIDATES, ENGLISH, {"457": [["duplicate", "also class 308"]]})
    return rows, render_sheet(rows)


def test_export_lists_every_class_with_alternatives_flags_and_empty_decisions():
    rows, text = exported()
    assert text.startswith("\ufeff") and text.splitlines()[0].lstrip("\ufeff").split(",") == list(SHEET_COLUMNS)
    tench, bow_tie = rows
    assert (tench["class_idx"], tench["english"], tench["agreement"]) == (0, "tench", 2)
    assert tench["alternatives"] == "Schlei (omw:odenet; not_first; 1 src) | Tench (wikt; english; 1 src)"
    assert tench["reviewed"] == "accept by anna on 2025-01-14"
    assert "stale_review: accepted 'Schleie' on 2025-01-14; the rules now pick 'Schlei'" in tench["flags"]
    assert bow_tie["flags"] == "duplicate: also class 308" and bow_tie["agreement"] == 0
    assert all(row[c] == "" for row in rows for c in ("decision", "new_label", "reviewer", "date", "note"))


def decide(text, decisions, delimiter=","):
    """The sheet as a spreadsheet saves it after a reviewer filled some decision cells."""
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    for row in rows:
        row.update(decisions.get(row["wnid"], {}))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), delimiter=delimiter)
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_import_reads_what_a_spreadsheet_saved(delimiter):
    _, text = exported()
    saved = decide(
        text,
        {
            BOW_TIE: {"decision": "replace", "new_label": "Querbinder", "note": "Fliege, das Insekt"},
            TENCH: {"decision": "Accept", "reviewer": "bert", "date": "2025-02-01"},
        },
        delimiter,
    )
    lang, reviews = sheet_reviews(saved, "sheet.csv", CONTEXT, reviewer="carla", date="2025-03-01")
    assert lang == "deu_Latn"
    assert [(r.wnid, r.decision, r.label, r.reviewer, r.date, r.note) for r in reviews] == [
        (TENCH, "accept", "Schleie", "bert", "2025-02-01", ""),
        (BOW_TIE, "replace", "Querbinder", "carla", "2025-03-01", "Fliege, das Insekt"),
    ]


SHEET_ERRORS = {  # the sheet's rows: line 2 tench, line 3 bow tie
    "replace without label": ({BOW_TIE: {"decision": "replace"}}, "sheet.csv:3: replace without a label"),
    "new label with accept": (
        {BOW_TIE: {"decision": "accept", "new_label": "Querbinder"}},
        "sheet.csv:3: new_label 'Querbinder' with decision accept",
    ),
    "English lemma": (
        {BOW_TIE: {"decision": "replace", "new_label": "bow tie"}},
        "sheet.csv:3: label 'bow tie' equals",
    ),
    "wrong script": (
        {BOW_TIE: {"decision": "replace", "new_label": "галстук"}},
        "sheet.csv:3: label 'галстук' is not in",
    ),
    "unknown decision": ({TENCH: {"decision": "ok"}}, "sheet.csv:2: decision 'ok'"),
    "bad date": ({TENCH: {"decision": "reject", "date": "1/14/2025"}}, "sheet.csv:2: date '1/14/2025'"),
    "unknown wnid": ({TENCH: {"decision": "reject", "wnid": "n00000000"}}, "sheet.csv:2: unknown wnid"),
    "two languages": ({BOW_TIE: {"lang": "fra_Latn"}}, "sheet.csv:3: language 'fra_Latn' in a sheet of deu_Latn"),
    "same class twice": (
        {TENCH: {"decision": "reject", "wnid": BOW_TIE}, BOW_TIE: {"decision": "reject"}},
        "sheet.csv:3: wnid n02883205 decided twice (also at sheet.csv:2)",
    ),
}


@pytest.mark.parametrize("case", sorted(SHEET_ERRORS))
def test_a_bad_sheet_row_is_one_error_naming_the_line(case):
    decisions, expected = SHEET_ERRORS[case]
    _, text = exported()
    with pytest.raises(BabelforgeError) as error:
        sheet_reviews(decide(text, decisions), "sheet.csv", CONTEXT, reviewer="carla", date="2025-03-01")
    assert expected in str(error.value) and "\n" not in str(error.value)


def test_a_file_that_is_no_sheet_is_named():
    with pytest.raises(BabelforgeError, match=r"x.csv:1: not a review sheet \(no column decision"):
        read_sheet("lang,wnid,label\n", "x.csv")


def test_a_later_decision_replaces_the_earlier_one_and_says_so():
    def review(wnid, decision, label="", date="2025-01-14"):
        return Review("deu_Latn", wnid, decision, label, "anna", date, "", "x")

    existing = [review(BOW_TIE, "accept", "Fliege"), review(TENCH, "accept", "Schleie")]
    incoming = [
        review(BOW_TIE, "replace", "Querbinder", "2025-03-01"),
        review(TENCH, "accept", "Schleie"),
        review(GOLDFISH, "reject"),
    ]
    merged, messages = merge_reviews(existing, incoming)
    assert [(r.wnid, r.decision) for r in merged] == [(TENCH, "accept"), (GOLDFISH, "reject"), (BOW_TIE, "replace")]
    assert messages == [
        f"{BOW_TIE}: replace 'Querbinder' by anna on 2025-03-01 replaces accept 'Fliege' by anna on 2025-01-14"
    ]
