"""Human reviews of the labels: `resources/reviews/<lang key>.tsv`, applied after the rules.

A review file is a TSV in git, one decision per class:

    wnid	decision	label	reviewer	date	note
    n02883205	replace	Querbinder	anna	2025-01-14	Fliege is also the insect (class 308)

`accept` marks the label reviewed (its `label`, when given, pins the accepted text: when the
rules later pick another lemma the review is *stale*, the accepted label is kept and the audit
flags it); `reject` drops the class from that language; `replace` sets `label` (required) with
source `review:<reviewer>`. A bad row stops the stage with one line naming the file and line,
before anything is written.

Every field is a value, never structure (`core.typed_text`): a line break, tab, control, bidi or
invisible format character, or more than `FIELD_CHARS` characters is refused naming the field, so
no field can start a second decision or a seventh column. Rows are lines split at `\n` only (a
`\r\n` end is read as `\n`): a U+2028 inside a note is refused, not taken for a line end. The
writer, `format_review_file`, reads its text back and refuses to return one that would not give
exactly the reviews it was given.

Parsing, checking and applying are pure; `read_reviews` is the only function reading files.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from babelforge.babel_imagenet.cleaning import normalise_lemma, typed_label_problem
from babelforge.babel_imagenet.forms import english_key
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table, sha256_text
from babelforge.core.languages import ENGLISH, registry
from babelforge.core.scripts import expected_script_share
from babelforge.core.text_taggers import duplicate_flags
from babelforge.core.typed_text import shown, value_problem

REVIEW_HEADER = ("wnid", "decision", "label", "reviewer", "date", "note")
DECISIONS = ("accept", "reject", "replace")
REVIEW_SOURCE = "review:"
# Columns the review step adds to labels.parquet (after the rules' own columns).
REVIEW_COLUMNS = ("reviewed", "review_decision", "reviewer", "review_date", "review_note", "rule_label", "review_stale")
# Files a reviews folder may hold besides `<lang key>.tsv`.
IGNORED_FILES = ("README.md",)
REVIEWED_RANK = -1  # `rank` of a label a review set: it is no sense's rank
# The most characters a field may hold (the longest built label has 52; a note is a sentence or two).
FIELD_CHARS = {"wnid": 16, "decision": 16, "label": 100, "reviewer": 64, "date": 16, "note": 1000}


@dataclass(frozen=True)
class Review:
    """One decision of a review file; `where` is `file:line` for messages."""

    lang: str
    wnid: str
    decision: str
    label: str  # normalised; "" when not given
    reviewer: str
    date: str
    note: str
    where: str


@dataclass(frozen=True)
class ReviewContext:
    """What a review is checked against: the classes and the English lemmas of the build."""

    wnids: frozenset[str]
    english_keys: frozenset[str]
    expected_scripts: Mapping[str, Sequence[str]]  # lang -> registry's expected scripts


# --- checks ------------------------------------------------------------------------------------


def label_problem(label: str, lang: str, context: ReviewContext) -> str | None:
    """Why `label` cannot be a label of `lang` (None when it can): the cleaning a source label gets
    (`typed_label_problem`), the rules' English test, the script; first, that it is one value."""

    value = value_problem(label, FIELD_CHARS["label"])
    if value:
        return f"label {shown(label)} {value}"
    typed = typed_label_problem(label, cleaned=lang != ENGLISH)
    if typed:
        return typed
    if lang != ENGLISH and english_key(label) in context.english_keys:
        return f"label {label!r} equals an English lemma (the rules drop those); give the word in the language"
    expected = tuple(context.expected_scripts.get(lang, ()))
    share = expected_script_share(label, expected) if expected else None
    if share is not None and share < 0.5:
        return (
            f"label {label!r} is not in the script of {lang} (expected {'/'.join(expected)}); "
            "check the language of the file"
        )
    return None


def check_review(review: Review, context: ReviewContext) -> None:
    """One decision against the build: known wnid, a usable label. Raises with `file:line`."""
    if review.wnid not in context.wnids:
        raise BabelforgeError(
            f"{review.where}: unknown wnid {review.wnid!r}; use one of the 1,000 ImageNet "
            "wnids (resources/imagenet1k_classes.tsv)"
        )
    if review.label:
        problem = label_problem(review.label, review.lang, context)
        if problem:
            raise BabelforgeError(f"{review.where}: {problem}")


def parse_row(fields: Sequence[str], lang: str, where: str) -> Review:
    """One TSV row (`REVIEW_HEADER` order) as a Review; structural problems raise with `where`."""
    if len(fields) != len(REVIEW_HEADER):
        raise BabelforgeError(
            f"{where}: {len(fields)} fields, expected {len(REVIEW_HEADER)} separated by tabs "
            f"({', '.join(REVIEW_HEADER)})"
        )
    wnid, decision, label, reviewer, date, note = (field.strip() for field in fields)
    for column, value in zip(REVIEW_HEADER, (wnid, decision, "", reviewer, date, note)):  # the label: check_review
        problem = value_problem(value, FIELD_CHARS[column])
        if problem:
            raise BabelforgeError(f"{where}: {column} {shown(value)} {problem}")
    if decision not in DECISIONS:
        raise BabelforgeError(f"{where}: decision {decision!r}; use accept, reject or replace")
    label = normalise_lemma(label)
    if decision == "replace" and not label:
        raise BabelforgeError(f"{where}: replace without a label; put the new label in the label column")
    if not reviewer:
        raise BabelforgeError(f"{where}: no reviewer; name who decided (it becomes the source review:<reviewer>)")
    if not valid_date(date):
        raise BabelforgeError(f"{where}: date {date!r} is not a date written YYYY-MM-DD")
    return Review(lang, wnid, decision, label, reviewer, date, note, where)


def valid_date(text: str) -> bool:
    try:
        return len(text) == 10 and datetime.date.fromisoformat(text).isoformat() == text
    except ValueError:
        return False


def parse_review_file(text: str, lang: str, where: str) -> list[Review]:
    """A whole review file (header first; blank lines skipped); the same wnid twice is an error."""
    # `\n` ends a row, never U+2028 or a lone `\r` (`splitlines` would): those are refused in a field
    lines = [line.removesuffix("\r") for line in text.lstrip("\ufeff").removesuffix("\n").split("\n")]
    if not lines or tuple(lines[0].split("\t")) != REVIEW_HEADER:
        raise BabelforgeError(f"{where}:1: the header must be {chr(9).join(REVIEW_HEADER)!r} (tab-separated)")
    reviews: list[Review] = []
    seen: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        review = parse_row(line.split("\t"), lang, f"{where}:{number}")
        if review.wnid in seen:
            raise BabelforgeError(
                f"{review.where}: wnid {review.wnid} twice (first at {seen[review.wnid]}); keep one decision per class"
            )
        seen[review.wnid] = review.where
        reviews.append(review)
    return reviews


def format_review_file(reviews: Iterable[Review]) -> str:
    """The TSV text of a review file, rows in wnid order (= class order), so diffs stay small.

    Read back before it is returned: a text that would not give exactly these rows and fields
    (a tab or line break in a field) raises instead of being written.
    """
    rows = [(r.wnid, r.decision, r.label, r.reviewer, r.date, r.note) for r in sorted(reviews, key=lambda r: r.wnid)]
    text = "\n".join("\t".join(fields) for fields in [REVIEW_HEADER, *rows]) + "\n"
    back = [tuple(line.split("\t")) for line in text.splitlines()[1:]]  # every line end any reader knows
    if back != rows:
        differs = next((i for i, (a, b) in enumerate(zip(back, rows)) if a != b), min(len(back), len(rows)))
        raise BabelforgeError(
            f"review file: {len(rows)} decisions would read back as {len(back)} rows (row {differs + 2} differs); "
            "a field holds a tab or line break, nothing written"
        )
    return text


def review_file_lang(name: str, known: Iterable[str]) -> str:
    """The language key a review file's name gives (`deu_Latn.tsv`); an unknown one raises."""
    stem, suffix = (name[:-4], ".tsv") if name.endswith(".tsv") else (name, "")
    if suffix != ".tsv" or stem not in set(known):
        raise BabelforgeError(
            f"{name}: not a review file name; name it <language key>.tsv with a key of "
            "resources/languages.tsv (e.g. deu_Latn.tsv)"
        )
    return stem


def read_reviews(
    folder: str | Path, context: ReviewContext, known_langs: Iterable[str]
) -> tuple[dict[str, list[Review]], dict[str, str]]:
    """Every review file of `folder`, checked: ({lang: reviews}, {lang: sha256 of its file}).

    A missing folder means no reviews. Raises on the first bad file name or row.
    """

    root = Path(folder)
    if not root.is_dir():
        return {}, {}
    known = set(known_langs)
    reviews: dict[str, list[Review]] = {}
    hashes: dict[str, str] = {}
    for path in sorted(root.iterdir()):
        if path.name in IGNORED_FILES or path.name.startswith("."):
            continue
        try:
            lang = review_file_lang(path.name, known)
        except BabelforgeError as error:
            raise BabelforgeError(f"{root}/{error}") from None
        text = path.read_bytes().decode("utf-8")  # no newline translation: a lone `\r` in a field is refused
        parsed = parse_review_file(text, lang, str(path))
        for review in parsed:
            check_review(review, context)
        reviews[lang], hashes[lang] = parsed, sha256_text(text)
    return reviews, hashes


# --- applying ----------------------------------------------------------------------------------


def apply_reviews(
    rows: Sequence[Mapping[str, Any]], reviews: Mapping[str, Sequence[Review]], class_of: Mapping[str, int]
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """labels.parquet rows (the rules' choices) with the reviews applied.

    Returns (rows with `REVIEW_COLUMNS` filled and `is_duplicate` recomputed, the record of what
    was applied per language (for provenance: decisions, rejected classes with who and when),
    warnings for decisions that had nothing to act on). class_of: wnid -> class_idx.
    """
    by_key: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        row = dict(row)
        row.update(
            reviewed=False,
            review_decision="",
            reviewer="",
            review_date="",
            review_note="",
            rule_label=row["label"],
            review_stale=False,
        )
        by_key[(row["lang"], int(row["class_idx"]))] = row
    langs = {lang for lang, _ in by_key}
    record: dict[str, Any] = {}
    warnings: list[str] = []
    for lang in sorted(reviews):
        if lang not in langs:
            warnings.append(f"{lang}: {len(reviews[lang])} reviews for a language the rules did not keep; not applied")
            continue
        applied = record.setdefault(lang, {"decisions": {d: 0 for d in DECISIONS}, "rejected": []})
        for review in reviews[lang]:
            key = (lang, class_of[review.wnid])
            row = by_key.get(key)
            if review.decision == "reject":
                if row is None:
                    warnings.append(f"{review.where}: reject of class {key[1]}, which has no label; nothing to do")
                    continue
                del by_key[key]
                applied["rejected"].append(
                    {
                        "class_idx": key[1],
                        "wnid": review.wnid,
                        "label": row["label"],
                        "reviewer": review.reviewer,
                        "date": review.date,
                        "note": review.note,
                    }
                )
            elif review.decision == "accept" and not review.label and row is None:
                warnings.append(f"{review.where}: accept of class {key[1]}, which has no label; nothing to do")
                continue
            else:
                by_key[key] = reviewed_row(row, review, key[1])
            applied["decisions"][review.decision] += 1
    result = [by_key[key] for key in sorted(by_key)]
    for lang in record:  # a replace or reject can make or end a duplicate; other languages keep the rules' flags
        members = [row for row in result if row["lang"] == lang]
        for row, flag in zip(members, duplicate_flags([lang] * len(members), [row["label"] for row in members])):
            row["is_duplicate"] = flag
    return result, record, warnings


def reviewed_row(row: Mapping[str, Any] | None, review: Review, class_idx: int) -> dict[str, Any]:
    """A labels row after an `accept` or `replace` (a class the rules left empty gets a new row)."""
    if row is None:
        row = {
            "class_idx": class_idx,
            "wnid": review.wnid,
            "lang": review.lang,
            "label": None,
            "source": None,
            "rank": REVIEWED_RANK,
            "n_senses": 0,
            "n_dropped_english": 0,
            "n_dropped_mt": 0,
            "n_dropped_low_precision": 0,
            "used_low_precision": False,
            "raw_lemma": None,
            "routed_from": "",
            "n_sources": 0,
            "rank_reason": "",
            "is_duplicate": False,
            "rule_label": None,
        }
    result = dict(
        row,
        reviewed=True,
        review_decision=review.decision,
        reviewer=review.reviewer,
        review_date=review.date,
        review_note=review.note,
        review_stale=False,
    )
    own = review.label if review.decision == "replace" else (review.label or row["label"])
    if own != row["rule_label"]:
        # a replace, or an accept of a label the rules no longer pick (stale: the accepted text stays)
        result.update(
            label=own,
            source=f"{REVIEW_SOURCE}{review.reviewer}",
            rank=REVIEWED_RANK,
            raw_lemma=own,
            routed_from="",
            n_sources=1,
            rank_reason="review",
            review_stale=review.decision == "accept",
        )
    return result


def reviewed_frame(labels, reviews: Mapping[str, Sequence[Review]], classes):
    """`apply_reviews` over the labels DataFrame; the same column types, `REVIEW_COLUMNS` appended."""
    import pandas as pd

    class_of = {str(w): int(i) for w, i in zip(classes["wnid"], classes["class_idx"])}
    rows, record, warnings = apply_reviews(labels.to_dict("records"), reviews, class_of)
    frame = pd.DataFrame(rows, columns=[*labels.columns, *REVIEW_COLUMNS])
    frame = frame.astype({**labels.dtypes.to_dict(), "reviewed": "bool", "review_stale": "bool"})
    return frame, record, warnings


def review_context(classes, english_keys: frozenset[str], languages=None) -> ReviewContext:
    """The context of a build: its class table (wordnet.parquet), its English keys, the registry."""

    languages = languages if languages is not None else registry()
    return ReviewContext(
        frozenset(str(w) for w in classes["wnid"]),
        english_keys,
        {language.key: language.expected_scripts for language in languages},
    )


def apply_review_folder(labels, classes, folder: str | Path, english_keys: frozenset[str], languages=None):
    """The labels stage's review step: read and check every file of `folder`, then apply them.

    Returns (labels with the review columns, provenance record {lang: file, sha256, decisions,
    rejected}, warnings). Raises before returning anything when a file or row is bad.
    """

    languages = languages if languages is not None else registry()
    reviews, hashes = read_reviews(folder, review_context(classes, english_keys, languages), languages.keys())
    frame, applied, warnings = reviewed_frame(labels, reviews, classes)
    record = {lang: {"file": f"{lang}.tsv", "sha256": hashes[lang], **applied[lang]} for lang in sorted(applied)}
    return frame, record, warnings


# --- coverage (audit, cards) -------------------------------------------------------------------


def review_record(provenance: Mapping[str, Any]) -> dict[str, Any]:
    """The per-language review record in a labels.parquet provenance ({} before any review)."""
    return dict((provenance.get("sources") or {}).get("reviews") or {})


def review_coverage(rows: Iterable[Mapping[str, Any]], record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per language of labels.parquet: how much of it people reviewed and changed.

    classes: the rules' classes (labels kept + classes a review rejected); reviewed: classes with a
    decision; changed: classes whose label is not the rules' (replaced, stale, rejected); shares
    of `classes`, rounded to 4 places. Rows without the review columns count as unreviewed.
    """
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        entry = counts.setdefault(str(row["lang"]), {"labels": 0, "reviewed": 0, "changed": 0, "stale": 0})
        entry["labels"] += 1
        entry["reviewed"] += bool(row.get("reviewed", False))
        entry["changed"] += bool(row.get("reviewed", False)) and row.get("label") != row.get("rule_label")
        entry["stale"] += bool(row.get("review_stale", False))
    coverage = {}
    for lang in sorted(counts):
        entry = counts[lang]
        rejected = len((record.get(lang) or {}).get("rejected", []))
        classes = entry["labels"] + rejected
        reviewed, changed = entry["reviewed"] + rejected, entry["changed"] + rejected
        coverage[lang] = {
            "classes": classes,
            "reviewed": reviewed,
            "changed": changed,
            "rejected": rejected,
            "stale": entry["stale"],
            "reviewed_share": round(reviewed / classes, 4) if classes else 0.0,
            "changed_share": round(changed / classes, 4) if classes else 0.0,
        }
    return coverage


def labels_review_coverage(labels_path: str | Path) -> dict[str, dict[str, Any]]:
    """`review_coverage` of a built labels.parquet (what a dataset card states per language)."""

    columns = [
        c for c in ("lang", "label", "reviewed", "rule_label", "review_stale") if c in _column_names(labels_path)
    ]
    rows = read_table(labels_path, columns=columns).to_dict("records")
    return review_coverage(rows, review_record(read_provenance(labels_path)))


def _column_names(path: str | Path) -> list[str]:
    import pyarrow.parquet as pq

    return pq.read_schema(path).names


def reviewed_labels(classes, folder, english_keys) -> dict[tuple[str, str], str]:
    """(lang, synset) -> the label a person set (`replace`) or accepted with its text pinned
    (`accept` with a label): evidence for the sources' trust. An `accept` without a label
    accepts whatever the rules chose, which depends on the order being learned: not evidence."""
    reviews, _ = read_reviews(folder, review_context(classes, english_keys), registry().keys())
    synset_of = dict(zip(classes["wnid"], classes["synset"]))
    return {
        (lang, synset_of[review.wnid]): review.label
        for lang, decisions in reviews.items()
        for review in decisions
        if review.label and review.decision in ("accept", "replace")
    }
