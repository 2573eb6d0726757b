"""Per-language label checks: pure functions over plain data (no files, no models).

Every check returns the rows it flags as `{class_idx: detail}`; `audit_language` runs them
all for one language and returns a JSON-able record. Severities and the quality-score
weights come from `params.yaml` (`audit:` group), so re-ranking never re-runs a check.
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from builders.core.scripts import dominant_script, expand_script, han_variant

# name -> what a flagged row means (shown on the HTML pages).
CHECKS: dict[str, str] = {
    "empty_label": "label is empty or has leading/trailing whitespace",
    "script_mismatch": "label's script is not one the registry expects for the language",
    "han_variant": "Chinese label in the other standard than the language's (Simplified vs Traditional)",
    "english_lookalike": "label equals an English lemma once accents, case, spaces and punctuation are stripped",
    "duplicate": "the same label names more than one class",
    "langid_other": "langid confidently assigns the label to another language (a hint: labels are short)",
}
SEVERITIES = ("error", "warning", "info")


def expand_scripts(scripts: Iterable[str]) -> frozenset[str]:
    """Registry scripts as Unicode script codes (`Hans` -> `Hani`, `Jpan` -> Han + kana)."""
    return frozenset().union(*(expand_script(script) for script in scripts))


def loose_form(text: str) -> str:
    """`text` with accents, case, whitespace and punctuation removed: `Café-Crème` -> `cafecreme`."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = (char for char in decomposed if unicodedata.category(char)[0] in "LN")
    return unicodedata.normalize("NFC", "".join(kept)).casefold()


def duplicate_key(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip().casefold()


# --- row checks: labels is {class_idx: label}; each returns {class_idx: detail} -----------------

def empty_labels(labels: Mapping[int, str]) -> dict[int, str]:
    return {
        idx: "empty" if not label.strip() else "leading/trailing whitespace"
        for idx, label in labels.items()
        if not label.strip() or label != label.strip()
    }


def is_latin_acronym(text: str, max_letters: int = 6) -> bool:
    """All letters are basic Latin capitals and there are few of them (`GSM`, `DVD`, `GAP!`)."""
    letters = [char for char in text if char.isalpha()]
    return 0 < len(letters) <= max_letters and all("A" <= char <= "Z" for char in letters)


def script_mismatches(
    labels: Mapping[int, str],
    expected_scripts: Iterable[str],
    script_of: Callable[[str], str | None] = dominant_script,
) -> dict[int, str]:
    """Labels whose dominant script is not expected, except short Latin acronyms.
    No expected scripts: nothing to check."""
    expected = expand_scripts(expected_scripts)
    if not expected:
        return {}
    flagged = {}
    for idx, label in labels.items():
        script = script_of(label)
        if script == "Latn" and is_latin_acronym(label):
            continue  # `GSM`, `GAP!`: acronyms are written in Latin letters in any script
        if script is not None and script not in expected:
            flagged[idx] = f"{script}, expected {'/'.join(sorted(expected))}"
    return flagged


def han_variant_mismatches(labels: Mapping[int, str], expected_scripts: Iterable[str]) -> dict[int, str]:
    """Labels written in Traditional characters for a Simplified-Chinese key, or the reverse.

    Applies only when exactly one of `Hans` / `Hant` is expected (the key's script); a label
    without standard-specific characters passes (most Han characters are shared).
    """
    wanted = {script for script in expected_scripts if script in ("Hans", "Hant")}
    if len(wanted) != 1:
        return {}
    (want,) = wanted
    flagged = {}
    for idx, label in labels.items():
        variant = han_variant(label)
        if variant is not None and variant != want:
            flagged[idx] = f"{variant} characters, expected {want}"
    return flagged


def english_lookalikes(
    labels: Mapping[int, str],
    english_lemmas: Mapping[int, Sequence[str]],
) -> dict[int, str]:
    """Labels equal to an English lemma of any class under `loose_form`.

    The labels stage already drops exact (casefolded) matches; this catches what survives
    that rule only through an accent, a hyphen, a space or an apostrophe.
    """
    by_form: dict[str, tuple[int, str]] = {}
    for idx in sorted(english_lemmas):
        for lemma in english_lemmas[idx]:
            form = loose_form(lemma)
            if form:
                by_form.setdefault(form, (idx, lemma))
    flagged = {}
    for idx, label in labels.items():
        match = by_form.get(loose_form(label))
        if match is not None:
            other_idx, lemma = match
            where = "this class" if other_idx == idx else f"class {other_idx}"
            flagged[idx] = f"English '{lemma}' ({where})"
    return flagged


def duplicates(labels: Mapping[int, str]) -> dict[int, str]:
    """Labels (NFC, stripped, casefolded) shared by several classes; detail lists the others."""
    groups: dict[str, list[int]] = {}
    for idx in sorted(labels):
        groups.setdefault(duplicate_key(labels[idx]), []).append(idx)
    flagged = {}
    for members in groups.values():
        if len(members) > 1:
            for idx in members:
                others = ", ".join(str(other) for other in members if other != idx)
                flagged[idx] = f"also class {others}"
    return flagged


@dataclass(frozen=True)
class LangidPolicy:
    """How far langid is trusted on labels, which are mostly one or two words."""

    min_chars: int = 8        # shorter labels are reported but never counted as confident
    min_probability: float = 0.9


def langid_disagreements(
    labels: Mapping[int, str],
    expected_code: str | None,
    classify: Callable[[str], tuple[str, float]] | None,
    policy: LangidPolicy = LangidPolicy(),
) -> tuple[dict[int, str], dict[str, Any]]:
    """Labels langid confidently assigns to another language, and a summary.

    Returns ({class_idx: detail}, summary). `classify(text) -> (code, probability)` with
    normalised probabilities. Only a *confident* disagreement flags a row: the label has at
    least `policy.min_chars` characters and langid's probability is at least
    `policy.min_probability`. On one- or two-word labels langid disagrees with most
    languages most of the time, so all other disagreements are only counted in the summary.
    """
    if expected_code is None or classify is None:
        reason = "langid not run" if classify is None else "langid does not know this language"
        return {}, {"status": "not checked", "reason": reason}
    flagged, disagree = {}, 0
    for idx in sorted(labels):
        label = labels[idx]
        code, probability = classify(label)
        if code == expected_code:
            continue
        disagree += 1
        if len(label.strip()) >= policy.min_chars and probability >= policy.min_probability:
            flagged[idx] = f"{code} p={probability:.2f}"
    summary = {
        "status": "checked",
        "code": expected_code,
        "disagree": disagree,
        "disagree_confident": len(flagged),
        "disagree_share": round(disagree / len(labels), 4) if labels else 0.0,
        "policy": {"min_chars": policy.min_chars, "min_probability": policy.min_probability},
    }
    return flagged, summary


# --- aggregates --------------------------------------------------------------------------------

def source_family(source: str) -> str:
    """`omw:cow` -> `omw`; BabelNet sources keep their own name (`WIKI`, `WN`...)."""
    return source.split(":", 1)[0]


def source_mix(sources: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for source in sources:
        counts[source] = counts.get(source, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def quality_score(
    classes_kept: int,
    total_classes: int,
    flagged_counts: Mapping[str, int],
    weights: Mapping[str, float],
) -> float:
    """Documented ranking score in [0, 100]:

        100 * coverage * (1 - min(1, sum_c weight_c * flagged_c / classes_kept))

    coverage = classes_kept / total_classes. A language with every class and no flagged
    row scores 100; each flagged row costs its check's weight (params `audit.score_weights`;
    langid weighs little because it is unreliable on single words).
    """
    if classes_kept <= 0 or total_classes <= 0:
        return 0.0
    penalty = sum(weights.get(check, 0.0) * count for check, count in flagged_counts.items())
    clean_share = 1.0 - min(1.0, penalty / classes_kept)
    return round(100.0 * (classes_kept / total_classes) * clean_share, 2)


@dataclass(frozen=True)
class AuditPolicy:
    severity: Mapping[str, str]
    score_weights: Mapping[str, float]
    langid: LangidPolicy = LangidPolicy()
    total_classes: int = 1000

    def __post_init__(self):
        unknown = (set(self.severity) | set(self.score_weights)) - set(CHECKS)
        if unknown:
            raise ValueError(f"unknown audit checks {sorted(unknown)}; known: {sorted(CHECKS)}")
        bad = {check: level for check, level in self.severity.items() if level not in SEVERITIES}
        if bad:
            raise ValueError(f"audit severities must be one of {SEVERITIES}, got {bad}")


def audit_language(
    rows: Sequence[Mapping[str, Any]],
    english_lemmas: Mapping[int, Sequence[str]],
    expected_scripts: Sequence[str],
    langid_code: str | None,
    classify: Callable[[str], tuple[str, float]] | None,
    policy: AuditPolicy,
    is_english: bool = False,
) -> dict[str, Any]:
    """All label checks for one language.

    rows: that language's labels.parquet rows (class_idx, label, source, n_dropped_*).
    Returns {classes_kept, dropped, source_mix, checks: {name: {severity, count}},
    flags: {class_idx: [[check, detail], ...]}, langid, errors, warnings, quality_score}.
    """
    labels = {int(row["class_idx"]): str(row["label"]) for row in rows}
    flagged: dict[str, dict[int, str]] = {
        "empty_label": empty_labels(labels),
        "script_mismatch": script_mismatches(labels, expected_scripts),
        "han_variant": han_variant_mismatches(labels, expected_scripts),
        # English labels are the English names themselves: nothing to compare against.
        "english_lookalike": {} if is_english else english_lookalikes(labels, english_lemmas),
        "duplicate": duplicates(labels),
    }
    langid_flags, langid_summary = langid_disagreements(labels, langid_code, classify, policy.langid)
    flagged["langid_other"] = langid_flags

    flags: dict[int, list[list[str]]] = {}
    for check in CHECKS:
        for idx, detail in sorted(flagged[check].items()):
            flags.setdefault(idx, []).append([check, detail])
    counts = {check: len(flagged[check]) for check in CHECKS}
    by_severity = {level: 0 for level in SEVERITIES}
    for check, count in counts.items():
        by_severity[policy.severity.get(check, "warning")] += count
    return {
        "classes_kept": len(labels),
        "coverage": round(len(labels) / policy.total_classes, 4),
        "dropped": {
            "english": int(sum(int(row.get("n_dropped_english", 0) or 0) for row in rows)),
            "machine_translated": int(sum(int(row.get("n_dropped_mt", 0) or 0) for row in rows)),
            "low_precision": int(sum(int(row.get("n_dropped_low_precision", 0) or 0) for row in rows)),
        },
        "source_mix": source_mix(str(row["source"]) for row in rows),
        "flagged_as_duplicate_upstream": int(sum(bool(row.get("is_duplicate", False)) for row in rows)),
        "checks": {
            check: {"severity": policy.severity.get(check, "warning"), "count": counts[check],
                    "meaning": CHECKS[check]}
            for check in CHECKS
        },
        "langid": langid_summary,
        "flags": {str(idx): flags[idx] for idx in sorted(flags)},
        "errors": by_severity["error"],
        "warnings": by_severity["warning"],
        "quality_score": quality_score(len(labels), policy.total_classes, counts, policy.score_weights),
    }


# --- optional inputs: each takes that artifact's rows for one language ------------------------

def percentiles(values: Sequence[float], points: Sequence[int] = (5, 10, 25, 50, 75, 90, 95)) -> dict[str, float]:
    """Linear-interpolated percentiles (numpy's default method), without numpy."""
    ordered = sorted(float(v) for v in values if v is not None and not math.isnan(float(v)))
    if not ordered:
        return {}
    result = {}
    for point in points:
        position = (len(ordered) - 1) * point / 100
        low, high = math.floor(position), math.ceil(position)
        value = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
        result[f"p{point}"] = round(value, 4)
    return result


def _bool_share(rows: Sequence[Mapping[str, Any]], column: str) -> float:
    return round(sum(bool(row[column]) for row in rows) / len(rows), 4) if rows else 0.0


def prompt_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per prompt set (`prompt_set` column; one set when absent): prompt count, fallback
    share, strategies, the share of True for every other boolean column (the prompts
    stage's validity flags, whatever their names) and how often each check failed."""
    if not rows:
        return {"status": "no prompts for this language"}
    by_set: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_set.setdefault(str(row.get("prompt_set", "all")), []).append(row)
    return {"status": "built", "prompts": len(rows),
            "sets": {name: _prompt_set_summary(by_set[name]) for name in sorted(by_set)}}


def _prompt_set_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    flag_columns = sorted(
        column for column, value in rows[0].items() if isinstance(value, bool) and column != "fallback"
    )
    summary: dict[str, Any] = {"prompts": len(rows)}
    if "fallback" in rows[0]:
        summary["fallback_share"] = _bool_share(rows, "fallback")
    if "strategy" in rows[0]:
        summary["strategies"] = source_mix(str(row["strategy"]) for row in rows)
    summary["flag_shares"] = {column: _bool_share(rows, column) for column in flag_columns}
    if "failed" in rows[0]:
        summary["failed_checks"] = source_mix(
            str(check) for row in rows if row["failed"] is not None for check in list(row["failed"]))
    return summary


def caption_summary(
    rows: Sequence[Mapping[str, Any]], kiwi_column: str | None, chrf_column: str | None
) -> dict[str, Any]:
    """Kiwi score percentiles and mean chrF (over rows that have a reference)."""
    if not rows:
        return {"status": "no captions for this language"}
    summary: dict[str, Any] = {"status": "built", "captions": len(rows)}
    if "reason" in rows[0]:
        # the captions stage says why a caption got no translation; None/"" = one was kept
        summary["not_translated"] = source_mix(str(row["reason"]).split(":")[0] for row in rows if row["reason"])
    if kiwi_column:
        summary["kiwi_column"] = kiwi_column
        summary["kiwi_percentiles"] = percentiles([row[kiwi_column] for row in rows])
    if chrf_column:
        scored = [float(row[chrf_column]) for row in rows
                  if row[chrf_column] is not None and not math.isnan(float(row[chrf_column]))]
        summary["chrf"] = {"with_reference": len(scored),
                           "mean": round(sum(scored) / len(scored), 2) if scored else None}
    return summary


def balance(values: Iterable[Any]) -> dict[str, Any]:
    """Counts per value and max/min ratio (1.0 = perfectly balanced)."""
    counts = source_mix(str(value) for value in values)
    if not counts:
        return {"counts": {}, "max_min_ratio": None}
    ratio = max(counts.values()) / min(counts.values())
    return {"counts": dict(sorted(counts.items())), "max_min_ratio": round(ratio, 4)}


def mvl_sib_summary(rows_per_task: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Per task: rows, label-position balance, topic balance (when the rows carry a topic)."""
    summary: dict[str, Any] = {"status": "built", "tasks": {}}
    for task in sorted(rows_per_task):
        rows = rows_per_task[task]
        entry: dict[str, Any] = {"rows": len(rows)}
        if rows and "label" in rows[0]:
            entry["label_balance"] = balance(row["label"] for row in rows)
        topic_column = next((c for c in ("topic", "category") if rows and c in rows[0]), None)
        if topic_column:
            entry["topic_balance"] = balance(row[topic_column] for row in rows)
        summary["tasks"][task] = entry
    return summary


def reference_agreement(
    labels: Mapping[int, str], reference: Mapping[int, str]
) -> dict[str, Any]:
    """Classes in common with a reference release and exact-match agreement on them
    (after NFC + strip; `casefold_agreement` also ignores case)."""
    common = sorted(set(labels) & set(reference))
    exact = sum(
        unicodedata.normalize("NFC", labels[idx]).strip() == unicodedata.normalize("NFC", reference[idx]).strip()
        for idx in common
    )
    folded = sum(duplicate_key(labels[idx]) == duplicate_key(reference[idx]) for idx in common)
    return {
        "status": "compared",
        "ours": len(labels),
        "reference": len(reference),
        "common": len(common),
        "exact_match": exact,
        "exact_agreement": round(exact / len(common), 4) if common else None,
        "casefold_agreement": round(folded / len(common), 4) if common else None,
        "only_ours": len(set(labels) - set(reference)),
        "only_reference": len(set(reference) - set(labels)),
    }
