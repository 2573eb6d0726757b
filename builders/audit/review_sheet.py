"""The review sheet: one language's labels as a CSV a spreadsheet opens, and back into its review file.

Export lists every class with its English name, WordNet gloss, current label, source, the
alternatives (every other candidate sense, with the rule that set it aside and how many sources
agree on it), the audit's flags and the earlier review, then empty decision columns. Import reads
the decided rows back as `Review`s (the same checks as the labels stage) and merges them into
the language's review file, a later decision for a class replacing the earlier one.

Formulas: a spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and some a tab or
carriage return) as a formula, so a label, gloss or flag from the sources could run code on the
reviewer's machine (CSV injection). Export writes such a cell with a leading `'`, which the
spreadsheet shows as text; so that a text starting with `'` stays unambiguous, the `'` goes before
any cell whose leading quotes are followed by one of those characters (`'=x` is written `''=x`).
Import removes exactly that one quote from such a cell, and only there: `escape_cell` and
`unescape_cell` are inverse for every text. A reviewer's label then gets the checks of a source
label (`reviews.label_problem`: clean, no markup, no `{}` slot, no control character, the script).

Pure functions over plain rows; files are read and written by `review_stage.py` and the audit.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.babel_imagenet.reviews import (
    Review,
    ReviewContext,
    check_review,
    parse_row,
    review_coverage,
    review_record,
)
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table

INFO_COLUMNS = (
    "lang",
    "class_idx",
    "wnid",
    "english",
    "gloss",
    "label",
    "source",
    "agreement",
    "reviewed",
    "alternatives",
    "flags",
)
DECISION_COLUMNS = ("decision", "new_label", "reviewer", "date", "note")
SHEET_COLUMNS = INFO_COLUMNS + DECISION_COLUMNS
STALE = "stale_review"
BOM = "\ufeff"  # spreadsheets (Excel) read a CSV as UTF-8 only with it
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # OWASP's list of cell starts a spreadsheet may run
QUOTE = "'"


# --- per-class facts shared by the sheet and the HTML page ---------------------------------------


def candidates_by_class(candidates: Iterable[Mapping[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    """candidates.parquet rows of one language, per class in their stored order."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for row in candidates:
        grouped.setdefault(int(row["class_idx"]), []).append(dict(row))
    return grouped


def alternatives(candidates: Sequence[Mapping[str, Any]], label: str | None) -> list[dict[str, Any]]:
    """The candidates a reviewer could pick instead of `label`: not chosen, one per distinct text."""
    seen = {label}
    result = []
    for candidate in candidates:
        if candidate["chosen"] or candidate["label"] in seen:
            continue
        seen.add(candidate["label"])
        result.append(dict(candidate))
    return result


def label_agreement(candidates: Sequence[Mapping[str, Any]], label: str | None) -> int:
    """How many sources give the current label (0 for a label no source gives: a reviewer's own)."""
    return max((int(c["agreement"]) for c in candidates if c["label"] == label), default=0)


def alternative_text(candidate: Mapping[str, Any]) -> str:
    return f"{candidate['label']} ({candidate['source']}; {candidate['set_aside']}; {candidate['agreement']} src)"


def optional_text(value: Any) -> str | None:
    """A nullable text cell as read from Parquet (None or NaN when empty) as str or None."""
    return value if isinstance(value, str) else None


def stale_detail(row: Mapping[str, Any]) -> str | None:
    """The audit's flag for an accept the rules no longer agree with (None when not stale)."""
    if not row.get("review_stale"):
        return None
    now = optional_text(row.get("rule_label"))
    return f"accepted {row['label']!r} on {row.get('review_date')}; the rules now pick " + (
        repr(now) if now else "nothing"
    )


def row_flags(row: Mapping[str, Any], check_flags: Sequence[Sequence[str]]) -> list[list[str]]:
    """The audit checks' [check, detail] pairs of a row, plus the stale-review flag."""
    flags = [list(flag) for flag in check_flags]
    stale = stale_detail(row)
    if stale:
        flags.append([STALE, stale])
    return flags


def review_text(row: Mapping[str, Any]) -> str:
    """`replace by anna on 2025-01-14` for a reviewed row, "" otherwise."""
    if not row.get("reviewed"):
        return ""
    return f"{row['review_decision']} by {row['reviewer']} on {row['review_date']}"


# --- export --------------------------------------------------------------------------------------


def sheet_rows(
    lang: str,
    labels: Sequence[Mapping[str, Any]],
    candidates: Mapping[int, Sequence[Mapping[str, Any]]],
    english: Mapping[int, Mapping[str, Any]],
    flags: Mapping[str, Sequence[Sequence[str]]],
) -> list[dict]:
    """One sheet row per labelled class of `lang`, in class order, decision columns empty."""
    rows = []
    for row in sorted(labels, key=lambda r: int(r["class_idx"])):
        idx = int(row["class_idx"])
        options = candidates.get(idx, [])
        eng = english.get(idx, {})
        rows.append(
            {
                "lang": lang,
                "class_idx": idx,
                "wnid": row["wnid"],
                "english": eng.get("name") or "",
                "gloss": eng.get("definition") or "",
                "label": row["label"],
                "source": row["source"],
                "agreement": label_agreement(options, row["label"]),
                "reviewed": review_text(row),
                "alternatives": " | ".join(alternative_text(c) for c in alternatives(options, row["label"])),
                "flags": "; ".join(f"{check}: {detail}" for check, detail in row_flags(row, flags.get(str(idx), []))),
                **{column: "" for column in DECISION_COLUMNS},
            }
        )
    return rows


def sample_rows(rows: Sequence[Mapping[str, Any]], size: int, seed: int) -> list[Mapping[str, Any]]:
    """A random sample of `size` of a language's labels.parquet rows, stratified by `source`:
    each source gets its share of `size` (largest remainders, then the larger source, break ties),
    drawn without replacement with `random.Random(seed)`, so a reviewed sample measures every
    source as often as it gives labels (babelforge.babel_imagenet.precision: measured precision)."""
    by_source: dict[str, list[Mapping[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: int(r["class_idx"])):
        by_source.setdefault(str(row["source"]), []).append(row)
    size = min(size, len(rows))
    if not size:
        return []
    quotas = {source: size * len(members) / len(rows) for source, members in by_source.items()}
    counts = {source: int(quota) for source, quota in quotas.items()}
    by_remainder = sorted(quotas, key=lambda s: (-(quotas[s] - counts[s]), -len(by_source[s]), s))
    for source in by_remainder[: size - sum(counts.values())]:
        counts[source] += 1
    generator = random.Random(seed)
    drawn = [row for source in sorted(by_source) for row in generator.sample(by_source[source], counts[source])]
    return sorted(drawn, key=lambda r: int(r["class_idx"]))


def _needs_quote(text: str) -> bool:
    return text.lstrip(QUOTE).startswith(FORMULA_STARTS)


def escape_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, with a leading `'` (see the module doc)."""
    return QUOTE + value if isinstance(value, str) and _needs_quote(value) else value


def unescape_cell(text: str) -> str:
    """The text `escape_cell` was given: the one added `'` removed, every other text as it is."""
    return text[1:] if text.startswith(QUOTE) and _needs_quote(text[1:]) else text


def render_sheet(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text (comma, quoted as needed, BOM first) with the `SHEET_COLUMNS` header, formulas neutralised."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=SHEET_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows({column: escape_cell(value) for column, value in row.items()} for row in rows)
    return BOM + buffer.getvalue()


# --- import --------------------------------------------------------------------------------------


def read_sheet(text: str, where: str) -> list[tuple[int, dict[str, str]]]:
    """(line, row) pairs of a sheet as a spreadsheet saved it: comma, semicolon or tab separated,
    the quote `escape_cell` added removed. `line` is where the row starts (a cell may span lines)."""
    text = text.lstrip(BOM)
    first = text.split("\n", 1)[0]
    delimiter = max((",", ";", "\t"), key=first.count)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [name.strip() for name in next(reader, [])]
    missing = [c for c in ("lang", "wnid", "label", *DECISION_COLUMNS) if c not in header]
    if missing:
        raise BabelforgeError(
            f"{where}:1: not a review sheet (no column {', '.join(missing)}); "
            "export one with `babelforge review export <lang>`"
        )
    rows = []
    end = reader.line_num
    for fields in reader:
        start, end = end + 1, reader.line_num
        if fields:  # a blank line is no row
            cells = fields + [""] * (len(header) - len(fields))
            rows.append((start, {key: unescape_cell(cell).strip() for key, cell in zip(header, cells) if key}))
    return rows


def sheet_reviews(
    text: str, where: str, context: ReviewContext, reviewer: str = "", date: str = ""
) -> tuple[str, list[Review]]:
    """The decided rows of a sheet as checked Reviews: (language, reviews).

    `reviewer` / `date` fill empty cells of those columns. An accept records the sheet's current
    label (so a later change by the rules shows as a stale review); a replace takes `new_label`.
    A line break (Alt+Enter in a spreadsheet), tab, control, bidi or invisible character in a cell
    is refused naming its line and column (`parse_row`): a cell is one value, never a second row.
    """
    reviews: list[Review] = []
    lang = ""
    seen: dict[str, str] = {}
    for line, row in read_sheet(text, where):
        at = f"{where}:{line}"
        lang = lang or row["lang"]
        if row["lang"] != lang:
            raise BabelforgeError(f"{at}: language {row['lang']!r} in a sheet of {lang}; one sheet per language")
        decision = row["decision"].lower()
        if not decision:
            continue
        if decision in ("accept", "reject") and row["new_label"]:
            raise BabelforgeError(
                f"{at}: new_label {row['new_label']!r} with decision {decision}; a new label needs the decision replace"
            )
        label = {"accept": row["label"], "replace": row["new_label"]}.get(decision, "")
        review = parse_row(
            [row["wnid"], decision, label, row["reviewer"] or reviewer, row["date"] or date, row["note"]], lang, at
        )
        if review.wnid in seen:
            raise BabelforgeError(f"{at}: wnid {review.wnid} decided twice (also at {seen[review.wnid]})")
        seen[review.wnid] = at
        check_review(review, context)
        reviews.append(review)
    if not lang:
        raise BabelforgeError(f"{where}: the sheet has no rows")
    return lang, reviews


def merge_reviews(existing: Sequence[Review], incoming: Sequence[Review]) -> tuple[list[Review], list[str]]:
    """The review file after an import: a later decision for a wnid replaces the earlier one.

    Returns (reviews in wnid order, one message per replaced decision).
    """
    merged = {review.wnid: review for review in existing}
    messages = []
    for review in incoming:
        earlier = merged.get(review.wnid)
        if earlier is not None and _decision(earlier) != _decision(review):
            messages.append(f"{review.wnid}: {_describe(review)} replaces {_describe(earlier)}")
        merged[review.wnid] = review
    return [merged[wnid] for wnid in sorted(merged)], messages


def _decision(review: Review) -> tuple[str, ...]:
    return (review.decision, review.label, review.reviewer, review.date, review.note)


def _describe(review: Review) -> str:
    label = f" {review.label!r}" if review.label else ""
    return f"{review.decision}{label} by {review.reviewer} on {review.date}"


# --- what the audit reports of the reviews -------------------------------------------------------


def language_reviews(
    rows: Sequence[Mapping[str, Any]], coverage: Mapping[str, Any] | None, record: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A language's review coverage and every decision (who, what, when), rejected classes included."""
    decisions = [
        {
            "class_idx": int(row["class_idx"]),
            "decision": row["review_decision"],
            "label": row["label"],
            "rule_label": optional_text(row.get("rule_label")),
            "reviewer": row["reviewer"],
            "date": row["review_date"],
            "note": row.get("review_note", ""),
            "stale": bool(row.get("review_stale", False)),
        }
        for row in rows
        if row.get("reviewed")
    ]
    decisions += [
        {
            "class_idx": int(r["class_idx"]),
            "decision": "reject",
            "label": None,
            "rule_label": r["label"],
            "reviewer": r["reviewer"],
            "date": r["date"],
            "note": r.get("note", ""),
            "stale": False,
        }
        for r in (record or {}).get("rejected", [])
    ]
    empty = {
        "classes": len(rows),
        "reviewed": 0,
        "changed": 0,
        "rejected": 0,
        "stale": 0,
        "reviewed_share": 0.0,
        "changed_share": 0.0,
    }
    return {**(dict(coverage) if coverage else empty), "decisions": sorted(decisions, key=lambda d: d["class_idx"])}


def audit_review_inputs(labels, labels_path, candidates_path) -> tuple[dict, dict, dict]:
    """(coverage per language, the labels' review record, candidates rows per language) for the audit.

    The candidates are optional: without candidates.parquet the pages show no alternatives.
    """

    record = review_record(read_provenance(labels_path))
    coverage = review_coverage(labels.to_dict("records"), record)
    candidates: dict[str, list[dict]] = {}
    if candidates_path and Path(candidates_path).exists():
        table = read_table(candidates_path)
        candidates = {str(lang): group.to_dict("records") for lang, group in table.groupby("lang", sort=True)}
    return coverage, record, candidates
