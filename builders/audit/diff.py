"""What changed between two releases of the labels: the changelog of a release.

`diff_labels` is pure: it takes `{lang: {class_idx: label}}` for the old and the new
release and returns per language the classes added, removed and relabelled, plus a
summary; each change says whether people made it (`by: review`: a review file's decision,
see `builders/babel_imagenet/reviews.py`) or the rules did (`by: rules`: new senses, new
rules or params). Rendering to Markdown/JSON is pure too; reading a labels file from a path
or from a git revision (through DVC) lives in `diff_stage.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

Labels = Mapping[str, Mapping[int, str]]
KINDS = ("added", "removed", "relabelled")


def diff_labels(
    old: Labels,
    new: Labels,
    by_review: Iterable[tuple[str, int]] = (),
    confirmed: Mapping[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Per language: added / removed class indices and relabelled (old -> new) classes.

    A language present in only one release counts all its classes as added or removed and
    is listed under `languages_added` / `languages_removed`. Unchanged languages are left out
    of `languages` but counted in the summary. `by_review`: the (lang, class_idx) a review
    decided in either release (`review_made`); their changes are marked `by: review`.
    `confirmed`: the labels reviews accepted since the old release (`review_confirmed`), listed
    per language as `confirmed` (a language with only confirmations counts as changed).
    """
    confirmed = confirmed or {}
    reviewed = set(by_review)
    per_language: dict[str, Any] = {}
    unchanged = 0
    for lang in sorted(set(old) | set(new)):
        before, after = old.get(lang, {}), new.get(lang, {})

        def by(idx: int, lang: str = lang) -> str:
            return "review" if (lang, idx) in reviewed else "rules"

        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        relabelled = [
            {"class_idx": idx, "old": before[idx], "new": after[idx], "by": by(idx)}
            for idx in sorted(set(before) & set(after))
            if before[idx] != after[idx]
        ]
        if not (added or removed or relabelled or confirmed.get(lang)):
            unchanged += 1
            continue
        per_language[lang] = {
            "classes_before": len(before),
            "classes_after": len(after),
            "added": [{"class_idx": idx, "label": after[idx], "by": by(idx)} for idx in added],
            "removed": [{"class_idx": idx, "label": before[idx], "by": by(idx)} for idx in removed],
            "relabelled": relabelled,
            "confirmed": list(confirmed.get(lang, [])),
        }
    summary = {
        "languages_old": len(old),
        "languages_new": len(new),
        "languages_added": sorted(set(new) - set(old)),
        "languages_removed": sorted(set(old) - set(new)),
        "languages_changed": len(per_language),
        "languages_unchanged": unchanged,
        **{f"classes_{kind}": sum(len(entry[kind]) for entry in per_language.values()) for kind in KINDS},
        "classes_confirmed": sum(len(entry["confirmed"]) for entry in per_language.values()),
        "by_review": {
            kind: sum(row["by"] == "review" for entry in per_language.values() for row in entry[kind]) for kind in KINDS
        },
    }
    return {"summary": summary, "languages": per_language}


def review_made(
    old_rows: Iterable[Mapping[str, Any]],
    new_rows: Iterable[Mapping[str, Any]],
    old_reviews: Mapping[str, Any],
    new_reviews: Mapping[str, Any],
) -> set[tuple[str, int]]:
    """The (lang, class_idx) whose label in either release is a review's, not the rules':
    a replaced or stale-accepted label (`label` differs from `rule_label`) or a rejected class.

    A change of such a class between the releases is review-made: a review set, changed or
    withdrawn it. Rows without `rule_label` (releases before reviews) are the rules' own.
    *_reviews: the review records of the labels' provenance (`reviews.review_record`).
    """
    keys: set[tuple[str, int]] = set()
    for rows in (old_rows, new_rows):
        for row in rows:
            rule = row.get("rule_label", row["label"])
            if bool(row.get("reviewed", False)) and row["label"] != rule:
                keys.add((str(row["lang"]), int(row["class_idx"])))
    for record in (old_reviews, new_reviews):
        for lang, entry in record.items():
            keys.update((lang, int(r["class_idx"])) for r in entry.get("rejected", []))
    return keys


def review_confirmed(
    old_rows: Iterable[Mapping[str, Any]], new_rows: Iterable[Mapping[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Per language the classes a review accepted since the old release: in the new one the label
    is the rules' own (`label == rule_label`) and reviewed, in the old one it was not reviewed as
    that label. No label changes, so the label diff alone would never show a reviewer's accept."""

    def accepted(rows) -> dict[tuple[str, int], str]:
        return {
            (str(row["lang"]), int(row["class_idx"])): row["label"]
            for row in rows
            if bool(row.get("reviewed", False)) and row["label"] == row.get("rule_label", row["label"])
        }

    before, after = accepted(old_rows), accepted(new_rows)
    confirmed: dict[str, list[dict[str, Any]]] = {}
    for (lang, idx), label in sorted(after.items()):
        if before.get((lang, idx)) != label:
            confirmed.setdefault(lang, []).append({"class_idx": idx, "label": label, "by": "review"})
    return confirmed


def _md(text: Any) -> str:
    """Table-cell safe: pipes escaped, newlines flattened."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(diff: Mapping[str, Any], old_name: str, new_name: str, max_rows: int = 50) -> str:
    """A changelog: summary, per-language count table, then each language's changes
    (at most `max_rows` rows per kind; the JSON output has them all)."""
    summary = diff["summary"]
    lines = [
        f"# Label changes: {_md(old_name)} → {_md(new_name)}",
        "",
        f"- languages: {summary['languages_old']} → {summary['languages_new']} "
        f"({summary['languages_changed']} changed, {summary['languages_unchanged']} unchanged)",
        f"- languages added: {', '.join(summary['languages_added']) or 'none'}",
        f"- languages removed: {', '.join(summary['languages_removed']) or 'none'}",
        f"- classes added {summary['classes_added']}, removed {summary['classes_removed']}, "
        f"relabelled {summary['classes_relabelled']}",
        "- made by reviews: "
        + ", ".join(f"{kind} {summary['by_review'][kind]}" for kind in KINDS)
        + "; the rest by the rules",
        f"- confirmed by reviews (label accepted as it was): {summary['classes_confirmed']}",
        "",
    ]
    if not diff["languages"]:
        lines.append("No label changed.")
        return "\n".join(lines) + "\n"
    lines += [
        "| language | classes before | classes after | added | removed | relabelled | by reviews |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for lang, entry in diff["languages"].items():
        by_review = sum(row["by"] == "review" for kind in KINDS for row in entry[kind])
        lines.append(
            f"| {lang} | {entry['classes_before']} | {entry['classes_after']} | {len(entry['added'])} "
            f"| {len(entry['removed'])} | {len(entry['relabelled'])} | {by_review} |"
        )
    for lang, entry in diff["languages"].items():
        lines += ["", f"## {lang}"]
        for origin, title in (("review", "made by reviews"), ("rules", "made by the rules")):
            changes = {kind: [row for row in entry[kind] if row["by"] == origin] for kind in KINDS}
            if any(changes.values()):
                lines += ["", f"### {title}", ""]
                lines += _changes_markdown(changes, max_rows)
        if entry["confirmed"]:
            shown = ", ".join(f"{row['class_idx']} `{_md(row['label'])}`" for row in entry["confirmed"][:max_rows])
            more = f" … and {len(entry['confirmed']) - max_rows} more" if len(entry["confirmed"]) > max_rows else ""
            lines += ["", "### confirmed by reviews", "", f"- confirmed: {shown}{more}"]
    return "\n".join(lines) + "\n"


def _changes_markdown(changes: Mapping[str, list], max_rows: int) -> list[str]:
    lines = []
    for kind in ("added", "removed"):
        rows = changes[kind]
        if rows:
            shown = ", ".join(f"{row['class_idx']} `{_md(row['label'])}`" for row in rows[:max_rows])
            more = f" … and {len(rows) - max_rows} more" if len(rows) > max_rows else ""
            lines.append(f"- {kind}: {shown}{more}")
    relabelled = changes["relabelled"]
    if relabelled:
        lines += ["", "| class | old | new |", "| ---: | --- | --- |"]
        lines += [f"| {row['class_idx']} | {_md(row['old'])} | {_md(row['new'])} |" for row in relabelled[:max_rows]]
        if len(relabelled) > max_rows:
            lines.append(f"\n… and {len(relabelled) - max_rows} more relabelled")
    return lines


def labels_by_language(records) -> dict[str, dict[int, str]]:
    """labels.parquet rows -> {lang: {class_idx: label}}; with several rows for a class
    (any sense rank), the lowest rank wins."""
    chosen: dict[tuple[str, int], tuple[int, str]] = {}
    for row in records:
        key = (str(row["lang"]), int(row["class_idx"]))
        rank = int(row.get("rank", 0) or 0)
        if key not in chosen or rank < chosen[key][0]:
            chosen[key] = (rank, str(row["label"]))
    result: dict[str, dict[int, str]] = {}
    for (lang, idx), (_, label) in sorted(chosen.items()):
        result.setdefault(lang, {})[idx] = label
    return result


# Tables that are not labels: rows matched on these keys (the ones a table has), per language.
# A GPU build (or another model) changes some translations and scores; a hash says only "differs",
# this says how many rows in which language.
ROW_KEYS = {
    "prompts": ("lang", "prompt_set", "template_id"),
    "captions": ("lang", "caption_id", "hyp_rank"),
}


def table_kind(columns: Iterable[str]) -> str | None:
    """`labels`, `prompts` or `captions` from a table's columns; None for another table."""
    names = set(columns)
    if {"lang", "class_idx", "label"} <= names:
        return "labels"
    if {"lang", "prompt_set", "template_id"} <= names:
        return "prompts"
    if {"lang", "caption_id"} <= names:
        return "captions"
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:  # NaN == NaN here
        return True
    return a == b


def diff_rows(
    old_rows: Iterable[Mapping[str, Any]], new_rows: Iterable[Mapping[str, Any]], keys: Iterable[str]
) -> dict[str, Any]:
    """Per language: rows before / after, added, removed and changed (a row whose key is in both
    releases and any other column differs), plus totals; languages without a change left out."""
    keys = list(keys)
    old = {tuple(row[k] for k in keys): row for row in old_rows}
    new = {tuple(row[k] for k in keys): row for row in new_rows}
    counts: dict[str, dict[str, int]] = {}

    def entry(lang) -> dict[str, int]:
        return counts.setdefault(str(lang), {"rows_before": 0, "rows_after": 0, "added": 0, "removed": 0, "changed": 0})

    for key, row in old.items():
        entry(key[0])["rows_before"] += 1
        if key not in new:
            entry(key[0])["removed"] += 1
        elif any(not _same(row[c], new[key].get(c)) for c in row if c not in keys):
            entry(key[0])["changed"] += 1
    for key in new:
        entry(key[0])["rows_after"] += 1
        if key not in old:
            entry(key[0])["added"] += 1
    changed = {lang: c for lang, c in sorted(counts.items()) if c["added"] or c["removed"] or c["changed"]}
    summary = {
        name: sum(c[name] for c in counts.values())
        for name in ("rows_before", "rows_after", "added", "removed", "changed")
    }
    summary["languages_changed"] = len(changed)
    summary["languages_unchanged"] = len(counts) - len(changed)
    return {"keys": keys, "summary": summary, "languages": changed}


def render_rows_markdown(diff: Mapping[str, Any], old_name: str, new_name: str) -> str:
    """Rows changed per language, as a table."""
    summary = diff["summary"]
    lines = [
        f"# Row changes: {_md(old_name)} → {_md(new_name)}",
        "",
        f"- rows: {summary['rows_before']} → {summary['rows_after']}; added {summary['added']}, removed "
        f"{summary['removed']}, changed {summary['changed']} (rows matched on {', '.join(diff['keys'])})",
        f"- languages: {summary['languages_changed']} changed, {summary['languages_unchanged']} unchanged",
        "",
    ]
    if not diff["languages"]:
        return "\n".join(lines + ["No row changed."]) + "\n"
    lines += [
        "| language | rows before | rows after | added | removed | changed |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {lang} | {c['rows_before']} | {c['rows_after']} | {c['added']} | {c['removed']} | {c['changed']} |"
        for lang, c in diff["languages"].items()
    ]
    return "\n".join(lines) + "\n"
