"""`babelforge review`: the review sheet of a language, out to a spreadsheet and back into git.

    babelforge review export deu_Latn                 -> deu_Latn.review.csv (every labelled class)
    babelforge review export ind_Latn --sample 50 --seed 7  -> 50 classes drawn at random, by source
    babelforge review import deu_Latn.review.csv      -> merged into resources/reviews/deu_Latn.tsv

Export reads the built labels, candidates and WordNet glosses (paths group of params.yaml) and the
audit's flags when the audit is built; cells a spreadsheet would run as formulas are neutralised
(`review_sheet.escape_cell`). Import checks every decided row as the labels stage will (wnid,
decision, label: clean as a source label, no markup or `{}` slot, script, English), merges it into the language's review file (a later
decision for a class replaces the earlier one, and says so) and writes nothing when a row is bad.
`dvc repro` then rebuilds the labels and what depends on them.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections import Counter
from pathlib import Path

from babelforge.audit.english import english_reference
from babelforge.audit.review_sheet import (
    candidates_by_class,
    merge_reviews,
    render_sheet,
    sample_rows,
    sheet_reviews,
    sheet_rows,
)
from babelforge.babel_imagenet.forms import english_lemma_keys
from babelforge.babel_imagenet.reviews import (
    check_review,
    format_review_file,
    parse_review_file,
    review_context,
    review_file_lang,
)
from babelforge.core.config import load_config
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_table, write_text
from babelforge.core.languages import registry
from babelforge.core.numbers import Bounds, number_flag
from babelforge.core.params import DEFAULT_PARAMS, load_params
from babelforge.core.stages import Paths, Stage

DEFAULT_SHEET = "build/review/{lang}.review.csv"  # under the project root: git-ignored, never committed by accident


def configure(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (its `paths:` group)")
    actions = parser.add_subparsers(
        dest="action",
        required=True,
        metavar="export|import",
        help="export a language's review sheet, or import a filled-in one",
    )
    export = actions.add_parser("export", help="write a language's review sheet (CSV)")
    export.add_argument(
        "lang", help="the language: registry key (deu_Latn), ISO 639-1 (de) or 639-3 (deu), BabelNet (DE)"
    )
    # the default lies in the project's git-ignored build/ folder (a sheet is a working copy, never
    # committed); a given FILE is taken from the working folder. {lang} is the language key
    export.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="sheet to write (default: build/review/<lang>.review.csv in the project, git-ignored)",
    )
    # a reviewed random sample turns the language's estimated label precision into a measured one
    export.add_argument(
        "--sample",
        type=number_flag(int, "--sample", Bounds(minimum=1)),
        default=None,
        metavar="N",
        help="only N classes not reviewed yet, drawn at random in proportion to their sources (stratified)",
    )
    export.add_argument(
        "--seed",
        type=number_flag(int, "--seed", Bounds(minimum=0)),
        default=0,
        help="seed of the --sample draw (default 0)",
    )
    imported = actions.add_parser("import", help="merge a filled-in sheet into resources/reviews/<lang>.tsv")
    imported.add_argument("sheet", metavar="FILE", help="the sheet (CSV; comma, semicolon or tab separated, UTF-8)")
    imported.add_argument("--reviewer", default="", help="reviewer for rows that leave the column empty")
    imported.add_argument("--date", default=None, help="date for rows that leave it empty (default: today)")
    for sub in (export, imported):  # `--params` after the action too (SUPPRESS keeps the default above)
        sub.add_argument("--params", default=argparse.SUPPRESS, help="params file (its `paths:` group)")


def run(args: argparse.Namespace) -> int:

    paths = load_config(Paths, load_params(args.params), "paths")
    if args.action == "export":
        lang = registry().resolve(args.lang).key
        # the command runs at the project root (a given --out is already seen from there)
        out = Path((args.out or DEFAULT_SHEET).replace("{lang}", lang))
        return export_sheet(paths, lang, out, args.sample, args.seed)
    return import_sheet(paths, Path(args.sheet), args.reviewer, args.date or datetime.date.today().isoformat())


def _need(path: str, what: str) -> Path:
    if not Path(path).exists():
        raise BabelforgeError(f"{path}: {what} not built; run `dvc repro labels` first")
    return Path(path)


def export_sheet(paths, lang: str, out: Path, sample: int | None = None, seed: int = 0) -> int:

    labels = read_table(_need(paths.labels, "labels"))
    rows = labels[labels["lang"] == lang].to_dict("records")
    if not rows:
        known = ", ".join(sorted(labels["lang"].unique())[:5])
        raise BabelforgeError(f"{lang}: no labels in {paths.labels}; give a built language key ({known}, ...)")
    drawn = ""
    if sample is not None:
        if sample < 1:
            raise BabelforgeError(f"review export --sample {sample}: give a number of classes, at least 1")
        unreviewed = [row for row in rows if not row.get("reviewed")]
        rows = sample_rows(unreviewed, sample, seed)
        per_source = Counter(str(row["source"]) for row in rows)
        drawn = (
            f" (a random sample of {len(unreviewed)} unreviewed, seed {seed}: "
            + ", ".join(f"{source} {n}" for source, n in sorted(per_source.items()))
            + ")"
        )
    candidates = read_table(_need(paths.candidates, "candidates"))
    options = candidates_by_class(candidates[candidates["lang"] == lang].to_dict("records"))
    english = english_reference(labels, paths.wordnet)
    audit_record = Path(paths.audit) / f"{lang}.json"
    flags = read_json(audit_record).get("flags", {}) if audit_record.exists() else {}
    write_text(render_sheet(sheet_rows(lang, rows, options, english, flags)), out)
    print(
        f"review export: {len(rows)} classes of {lang}{drawn} -> {out}"
        + ("" if audit_record.exists() else " (audit not built: no flags)"),
        file=sys.stderr,
    )
    return 0


def import_sheet(paths, sheet: Path, reviewer: str, date: str) -> int:

    if not sheet.exists():
        raise BabelforgeError(f"{sheet}: no such sheet")
    try:
        text = sheet.read_bytes().decode("utf-8")  # no newline translation: a `\r` in a cell stays visible
    except UnicodeDecodeError:
        raise BabelforgeError(f'{sheet}: not UTF-8 text; save it from the spreadsheet as "CSV UTF-8"') from None
    classes = read_table(_need(paths.wordnet, "wordnet"), columns=["wnid", "lemmas", "clip_name"])
    context = review_context(classes, english_lemma_keys(list(classes["lemmas"]) + [[n] for n in classes["clip_name"]]))
    lang, incoming = sheet_reviews(text, str(sheet), context, reviewer, date)
    review_file_lang(f"{lang}.tsv", context.expected_scripts)
    target = Path(paths.reviews) / f"{lang}.tsv"
    if not incoming:
        # a header-only review file would still be a new dependency state: `dvc repro` would rerun
        # labels and everything after it for no decision at all
        print(
            f"review import: no row of {sheet} has a decision; nothing written to {target}, nothing to "
            "rebuild; fill `decision` (accept, reject or replace) in the rows you judged and import again",
            file=sys.stderr,
        )
        return 0
    before = target.read_bytes().decode("utf-8") if target.exists() else None
    existing = parse_review_file(before, lang, str(target)) if before is not None else []
    for review in existing:
        check_review(review, context)
    merged, messages = merge_reviews(existing, incoming)
    text = format_review_file(merged)  # refuses a text that would not read back as these rows
    parse_review_file(text, lang, str(target))  # and what the labels stage reads is checked here, not there
    counts = {d: sum(r.decision == d for r in incoming) for d in ("accept", "reject", "replace")}
    decided = f"{len(incoming)} decisions from {sheet} ({', '.join(f'{n} {d}' for d, n in counts.items())})"
    if text == before:
        print(f"review import: {decided} are already in {target}; nothing written, nothing to rebuild", file=sys.stderr)
        return 0
    write_text(text, target)
    for message in messages:
        print(f"review import: {message}", file=sys.stderr)
    print(
        f"review import: {decided} -> {target} ({len(merged)} in all); {import_next_steps(target)}",
        file=sys.stderr,
    )
    return 0


def import_next_steps(target: Path) -> str:
    """What to check and run after an import. A language's first review file is new to git, so `git diff`
    shows nothing of it until it is added (`git status` lists it); reviews also move the label precision
    of the language's sources, so the precision floor may keep or drop other classes (the labels stage
    names them and why)."""
    return (
        f"`git status --short {target.parent}` lists it (`??` while git does not track it; `git diff` shows "
        "a tracked file's change); "
        "`dvc repro` applies them (its labels log names classes the precision floor brings back or drops)"
    )


STAGE = Stage(
    "review",
    "review sheet of a language: export <lang> | import <sheet> (into resources/reviews)",
    run,
    configure=configure,
    tool=True,
    docs="docs/guides/review-labels.md",
    owns={
        "reviews": ("resources/reviews", "people's review decisions, <lang key>.tsv each (in git)"),
    },
)
