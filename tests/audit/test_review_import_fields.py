"""`babelforge review import` end to end: every text a reviewer types is a value, never structure.

The sheet is imported into a review folder of the test's own (`import_sheet`), then read the way
the labels stage reads it (`read_reviews`): a cell may not smuggle a second decision, a seventh
field, a control or invisible character or a paste of 500 characters into the review file.
A hypothesis test fuzzes every cell with arbitrary Unicode: what the build reads is what was imported.
"""

from __future__ import annotations

import csv
import io
import types

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.audit.review_sheet import SHEET_COLUMNS, merge_reviews, render_sheet, sheet_reviews
from babelforge.audit.review_stage import import_sheet
from babelforge.babel_imagenet.reviews import (
    FIELD_CHARS,
    Review,
    ReviewContext,
    format_review_file,
    parse_review_file,
    read_reviews,
)
from babelforge.core.errors import BabelforgeError

TENCH, GOLDFISH, BOW_TIE = "n01440764", "n01443537", "n02883205"
CLASSES = [(TENCH, ["tench"], "tench"), (GOLDFISH, ["goldfish"], "goldfish"), (BOW_TIE, ["bow tie"], "bow tie")]
LANGS = ("deu_Latn", "pes_Arab")
CONTEXT = ReviewContext(
    frozenset(w for w, _, _ in CLASSES),
    frozenset({"tench", "goldfish", "bow tie"}),
    {"deu_Latn": ("Latn",), "pes_Arab": ("Arab",)},
)


@pytest.fixture
def paths(tmp_path):
    """A paths group with a three-class wordnet table and an empty reviews folder of the test's own."""
    wordnet = tmp_path / "wordnet.parquet"
    frame = pd.DataFrame(CLASSES, columns=["wnid", "lemmas", "clip_name"])
    frame.to_parquet(wordnet)
    return types.SimpleNamespace(wordnet=str(wordnet), reviews=str(tmp_path / "reviews"))


def sheet(*rows: dict, lang: str = "deu_Latn") -> str:
    """A filled-in sheet as a spreadsheet saves it (csv quoting: a cell may span lines)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SHEET_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({column: "" for column in SHEET_COLUMNS} | {"lang": lang, "date": "2025-01-14"} | row)
    return out.getvalue()


def imported(paths, tmp_path, text: str, lang: str = "deu_Latn"):
    """Import `text`; returns (the review file's text, the reviews the labels stage reads from it)."""
    path = tmp_path / f"{lang}.review.csv"
    path.write_text(text, encoding="utf-8")
    import_sheet(paths, path, "anna", "2025-01-14")
    target = tmp_path / "reviews" / f"{lang}.tsv"
    reviews, _ = read_reviews(tmp_path / "reviews", CONTEXT, LANGS)
    return target.read_text(encoding="utf-8"), reviews[lang]


def refused(paths, tmp_path, text: str) -> str:
    path = tmp_path / "deu_Latn.review.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BabelforgeError) as error:
        import_sheet(paths, path, "anna", "2025-01-14")
    assert not (tmp_path / "reviews").exists(), "a refused sheet wrote the review file"
    message = str(error.value)
    assert "\n" not in message
    return message


SMUGGLED = f"ok\n{GOLDFISH}\treject\t\tmallory\t2025-01-14\tgone"


def test_a_line_break_in_a_note_cannot_smuggle_a_second_decision(paths, tmp_path):
    row = {"wnid": BOW_TIE, "label": "Fliege", "decision": "accept", "note": SMUGGLED}
    message = refused(paths, tmp_path, sheet(row))
    assert message == (
        f"{tmp_path}/deu_Latn.review.csv:2: note 'ok\\n{GOLDFISH}\\treject\\t\\tmallory\\t2025-01-14\\t…' "
        "holds a line break (U+000A); a field is one line, write it as one"
    )


@pytest.mark.parametrize("note", ["a\tb", "a\u2028b", "a\u2029b", "a\rb", "a\x0bb", "a\x85b"])
def test_a_tab_or_line_separator_in_a_note_is_refused_not_written(paths, tmp_path, note):
    message = refused(paths, tmp_path, sheet({"wnid": TENCH, "decision": "reject", "note": note}))
    assert message.startswith(f"{tmp_path}/deu_Latn.review.csv:2: note {note!r} holds a "), message


def test_a_clean_sheet_round_trips_to_what_the_build_reads(paths, tmp_path):
    text, reviews = imported(
        paths,
        tmp_path,
        sheet({"wnid": BOW_TIE, "decision": "replace", "new_label": "Querbinder", "note": "Fliege, das Insekt"}),
    )
    assert text.splitlines()[1] == f"{BOW_TIE}\treplace\tQuerbinder\tanna\t2025-01-14\tFliege, das Insekt"
    assert [(r.wnid, r.label, r.note) for r in reviews] == [(BOW_TIE, "Querbinder", "Fliege, das Insekt")]


@pytest.mark.parametrize(
    "cell, expected",
    [
        ({"reviewer": "anna\nmallory"}, "reviewer 'anna\\nmallory' holds a line break (U+000A)"),
        ({"reviewer": "anna\tmallory"}, "reviewer 'anna\\tmallory' holds a tab"),
        ({"reviewer": "anna\u202e"}, "reviewer 'anna\\u202e' holds the bidirectional control U+202E"),
        ({"note": "ok\x1b[2J"}, "note 'ok\\x1b[2J' holds the control character U+001B"),
        ({"note": "ok\x07"}, "note 'ok\\x07' holds the control character U+0007"),
        ({"note": "ok\u2066x\u2069"}, "note 'ok\\u2066x\\u2069' holds the bidirectional control U+2066"),
        ({"note": "ok\u200bx"}, "note 'ok\\u200bx' holds the invisible or private-use character U+200B"),
        ({"note": "x" * 1001}, "note 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…' has 1,001 characters; at most 1,000"),
        ({"wnid": TENCH + "\u200d"}, "wnid 'n01440764\\u200d' holds a zero-width joiner (U+200D)"),
    ],
)
def test_structure_in_a_field_is_refused_naming_sheet_line_and_field(paths, tmp_path, cell, expected):
    row = {"wnid": TENCH, "decision": "reject"} | cell
    message = refused(paths, tmp_path, sheet(row))
    assert message.startswith(f"{tmp_path}/deu_Latn.review.csv:2: {expected}"), message


@pytest.mark.parametrize(
    "label, expected",
    [
        ("Fl\u200dege", "label 'Fl\\u200dege' holds a zero-width joiner (U+200D) outside a script"),
        ("Fl\u200cege", "label 'Fl\\u200cege' holds a zero-width non-joiner (U+200C) outside a script"),
        ("Fliege\u202e", "label 'Fliege\\u202e' holds the bidirectional control U+202E"),
        ("F" + "l" * 499, f"label 'F{'l' * 39}…' has 500 characters; at most 100"),
    ],
)
def test_a_label_with_a_joiner_bidi_or_500_characters_is_refused(paths, tmp_path, label, expected):
    message = refused(paths, tmp_path, sheet({"wnid": BOW_TIE, "decision": "replace", "new_label": label}))
    assert message.startswith(f"{tmp_path}/deu_Latn.review.csv:2: {expected}"), message


def test_a_joiner_a_script_spells_with_is_kept(paths, tmp_path):
    persian = "پاپیون\u200cها"  # the non-joiner between two Persian words is spelling
    _, (review,) = imported(
        paths,
        tmp_path,
        sheet({"wnid": BOW_TIE, "decision": "replace", "new_label": persian}, lang="pes_Arab"),
        "pes_Arab",
    )
    assert review.label == persian


@pytest.mark.parametrize(
    "row, expected",
    [
        (f"{TENCH}\treject\t\tanna\t2025-01-14\tok\u2028{GOLDFISH}", "note 'ok\\u2028n01443537' holds a line break"),
        (f"{TENCH}\treject\t\tanna\t2025-01-14\tok\x1b[2J", "note 'ok\\x1b[2J' holds the control character U+001B"),
        (f"{TENCH}\treject\t\tanna\t2025-01-14\tok\rx", "note 'ok\\rx' holds a line break (U+000D)"),
        (f"{BOW_TIE}\treplace\tFl\u200dege\tanna\t2025-01-14\t", "label 'Fl\\u200dege' holds a zero-width joiner"),
    ],
)
def test_a_hand_edited_review_file_with_structure_in_a_field_stops_the_build_at_its_line(tmp_path, row, expected):
    (tmp_path / "deu_Latn.tsv").write_text(
        "\t".join(("wnid", "decision", "label", "reviewer", "date", "note")) + "\n" + row + "\n", encoding="utf-8"
    )
    with pytest.raises(BabelforgeError) as error:
        read_reviews(tmp_path, CONTEXT, LANGS)
    assert str(error.value).startswith(f"{tmp_path}/deu_Latn.tsv:2: {expected}"), str(error.value)


def test_a_crlf_review_file_reads_as_lf():
    text = f"wnid\tdecision\tlabel\treviewer\tdate\tnote\r\n{TENCH}\treject\t\tanna\t2025-01-14\tok\r\n"
    (review,) = parse_review_file(text, "deu_Latn", "x.tsv")
    assert review.note == "ok"


def test_the_writer_refuses_a_review_it_could_not_read_back():
    smuggling = Review("deu_Latn", TENCH, "reject", "", "anna", "2025-01-14", SMUGGLED, "x")
    with pytest.raises(BabelforgeError, match=r"1 decisions would read back as 2 rows .*nothing written"):
        format_review_file([smuggling])
    for note in ("a\u2028b", "a\rb", "a\tb"):
        with pytest.raises(BabelforgeError, match="would read back"):
            format_review_file([Review("deu_Latn", TENCH, "reject", "", "anna", "2025-01-14", note, "x")])


# --- fuzz ----------------------------------------------------------------------------------------

CELL = st.text(max_size=30)  # any code point, line and paragraph separators and controls included
FUZZ_EXAMPLES = 400  # 1-3 s on the shared 2-core machine
FUZZED = ("wnid", "decision", "label", "new_label", "reviewer", "date", "note")


def test_fuzz_every_cell_round_trips_to_what_the_build_reads_or_is_refused():
    """A valid decision with one cell (any of them) replaced by arbitrary Unicode: import -> review
    file -> the labels stage's reader gives back exactly the imported decision (0 smuggled rows), or
    the sheet is refused with one line naming its row."""
    counts = {"tried": 0, "imported": 0, "refused": 0, "smuggled rows": 0}

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(decision=st.sampled_from(["accept", "reject", "replace"]), column=st.sampled_from(FUZZED), text=CELL)
    def one_sheet(decision, column, text):
        cells = {"wnid": BOW_TIE, "decision": decision, "label": "Fliege", "reviewer": "anna", "note": "ok"}
        cells |= {"new_label": "Querbinder" if decision == "replace" else "", column: text}
        row = dict.fromkeys(SHEET_COLUMNS, "") | cells | {"lang": "deu_Latn"}
        saved = render_sheet([row])  # the sheet as exported (formula cells escaped), filled in
        counts["tried"] += 1
        try:
            _, incoming = sheet_reviews(saved, "s.csv", CONTEXT, "anna", "2025-01-14")
            written = format_review_file(merge_reviews([], incoming)[0])
        except BabelforgeError as error:
            counts["refused"] += 1
            assert "\n" not in str(error) and str(error).startswith("s.csv:2: ")
            return
        counts["imported"] += 1
        counts[f"imported with {column} fuzzed"] = counts.get(f"imported with {column} fuzzed", 0) + 1
        read = parse_review_file(written, "deu_Latn", "deu_Latn.tsv")
        counts["smuggled rows"] += len(written.splitlines()) - 1 - len(incoming)
        fields = lambda r: (r.wnid, r.decision, r.label, r.reviewer, r.date, r.note)  # noqa: E731
        assert [fields(r) for r in read] == [fields(r) for r in incoming]
        for review in read:
            assert all(len(value) <= FIELD_CHARS[name] for name, value in zip(FIELD_CHARS, fields(review)))

    one_sheet()
    print(f"review import fuzz: {counts}")
    assert counts["smuggled rows"] == 0
    assert counts["tried"] == FUZZ_EXAMPLES and counts["imported"] > 0 and counts["refused"] > 0
