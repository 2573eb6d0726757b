"""The review sheet: export rows, read back what a spreadsheet saved, merge into a review file."""

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from babelforge.audit.review_sheet import (
    FORMULA_STARTS,
    SHEET_COLUMNS,
    escape_cell,
    merge_reviews,
    read_sheet,
    render_sheet,
    sheet_reviews,
    sheet_rows,
    unescape_cell,
)
from babelforge.babel_imagenet.cleaning import normalise_lemma
from babelforge.babel_imagenet.reviews import Review, ReviewContext, label_problem
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
    "markup in a new label": (
        {BOW_TIE: {"decision": "replace", "new_label": "<img src=x onerror=alert(1)>Hund"}},
        "sheet.csv:3: label '<img src=x onerror=alert(1)>Hund' holds markup ('<img src=x onerror=alert(1)>')",
    ),
    "template slot in a new label": (
        {BOW_TIE: {"decision": "replace", "new_label": "Hund {} Katze"}},
        "sheet.csv:3: label 'Hund {} Katze' holds a { or }",
    ),
    "control character in a new label": (
        {BOW_TIE: {"decision": "replace", "new_label": "Hund\x1b[2J"}},
        "sheet.csv:3: label 'Hund\\x1b[2J' holds the control character U+001B",
    ),
    "new label the rules would clean": (
        {BOW_TIE: {"decision": "replace", "new_label": "Fliege (Kleidung)"}},
        "sheet.csv:3: label 'Fliege (Kleidung)' is not clean (qualifier): the rules would make it 'Fliege'",
    ),
    "markup in an edited label cell, accepted": (
        {TENCH: {"decision": "accept", "label": "Schleie<script>"}},
        "sheet.csv:2: label 'Schleie<script>' holds markup",
    ),
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


# --- formulas ------------------------------------------------------------------------------------

FORMULAS = {"label": '=HYPERLINK("http://x","Fliege")', "gloss": "-1+2", "flags": "@SUM(A1)", "source": "+wikt"}


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))


def test_export_neutralises_every_cell_a_spreadsheet_would_run():
    rows, _ = exported()
    rows[1].update(FORMULAS, english="\tbow tie", note="'=already quoted")
    header, *body = cells(render_sheet(rows))
    bow_tie = dict(zip(header, body[1]))
    assert bow_tie["label"] == "'" + FORMULAS["label"] and bow_tie["gloss"] == "'-1+2"
    assert (bow_tie["flags"], bow_tie["source"], bow_tie["english"]) == ("'@SUM(A1)", "'+wikt", "'\tbow tie")
    assert bow_tie["note"] == "''=already quoted"  # a leading quote of the text itself stays distinguishable
    assert dict(zip(header, body[0]))["label"] == "Schleie"  # plain text is written as it is
    assert not any(cell.startswith(FORMULA_STARTS) for row in body for cell in row)


@pytest.mark.parametrize("label", ["-ismus", "=Fliege", "+Fliege", "@Fliege", "'=Fliege", "''-Fliege", "'Fliege"])
def test_import_restores_exactly_what_export_neutralised(label):
    rows, _ = exported()
    rows[1]["label"] = label
    saved = decide(render_sheet(rows), {BOW_TIE: {"decision": "accept"}})
    _, (review,) = sheet_reviews(saved, "sheet.csv", CONTEXT, reviewer="carla", date="2025-03-01")
    assert review.label == label


@given(st.text())
def test_the_neutralisation_round_trips_any_text(text):
    escaped = escape_cell(text)
    assert unescape_cell(escaped) == text
    assert not escaped.startswith(FORMULA_STARTS)
    assert escaped in (text, "'" + text)


NO_SCRIPT = ReviewContext(CONTEXT.wnids, CONTEXT.english_keys, {})  # any script: the property is about the text
# Any text, and names with a formula start or leading quotes, which the neutralisation must restore.
LABEL_TEXTS = st.text() | st.builds(
    str.__add__,
    st.sampled_from(["", "=", "+", "-", "@", "'", "'=", "''-", "'@", " =", "\t"]),
    st.text(st.characters(categories=["L"]), min_size=2, max_size=12),
)


@given(LABEL_TEXTS)
def test_any_label_survives_export_and_import_or_is_refused_naming_its_line(label):
    rows = sheet_rows("deu_Latn", [{**LABELS_ROW, "label": label}], {}, {}, {})
    saved = decide(render_sheet(rows), {TENCH: {"decision": "accept"}})
    expected = normalise_lemma(label)  # what any review label becomes (spaces collapsed, NFC)
    problem = label_problem(expected, "deu_Latn", NO_SCRIPT) if expected else None
    try:
        _, (review,) = sheet_reviews(saved, "sheet.csv", NO_SCRIPT, reviewer="carla", date="2025-03-01")
    except BabelforgeError as error:
        assert problem is not None and str(error) == f"sheet.csv:2: {problem}"
    else:
        assert problem is None and review.label == expected
        if expected == label:  # a valid label comes back unchanged
            assert review.label == label


LABELS_ROW = {"class_idx": 0, "wnid": TENCH, "label": "", "source": "wikt", "reviewed": False}


def test_export_without_out_writes_into_the_projects_ignored_build_folder(label_inputs, monkeypatch):
    """A sheet is a working copy: by default it lands under <project>/build/review/ (git-ignored), not in
    the folder the command runs from, so it is never committed by accident."""
    import pandas as pd
    import yaml

    from babelforge.cli import main as cli
    from tests.audit.conftest import REPO, audit_params

    root = label_inputs
    labels = pd.read_parquet(root / "labels.parquet")
    labels[["lang", "class_idx", "label", "source"]].assign(chosen=True, agreement=1).to_parquet(
        root / "candidates.parquet"
    )
    (root / "params.yaml").write_text(yaml.safe_dump(audit_params(root)), encoding="utf-8")
    (root / "dvc.yaml").write_text("stages: {}\n", encoding="utf-8")  # what marks the project root
    (root / "notes").mkdir()
    monkeypatch.chdir(root / "notes")
    assert cli(["review", "export", "fi"]) == 0
    assert (root / "build" / "review" / "fin_Latn.review.csv").is_file() and not any((root / "notes").iterdir())
    assert "/build/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
