"""Per-language label checks: pure functions over plain data (no files, no models).

The labels of one language are tagged by the shared taggers (`babelforge.core.text_taggers`:
blank, script, English look-alike, duplicate, langid ranking) and checked by the one
threshold step of `babelforge.core.taggers` (`audit_rules`: check -> conditions on the tagger
columns). `audit_language` returns the flagged rows as `{class_idx: [[check, detail], ...]}`
in a JSON-able record. Severities and the quality-score weights come from `params.yaml`
(`audit:` group), so re-ranking never re-runs a check.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from babelforge.core.config import setting
from babelforge.core.sections import source_mix
from babelforge.core.taggers import parse_rules, rejection_reasons, run_taggers
from babelforge.core.text_taggers import LangidRanking, TextContext, duplicate_key, expand_scripts

# name -> what a flagged row means (shown on the HTML pages).
CHECKS: dict[str, str] = {
    "empty_label": "label is empty or has leading/trailing whitespace",
    "script_mismatch": "label's script is not one the registry expects for the language",
    "han_variant": "Chinese label in the other standard than the language's (Simplified vs Traditional)",
    "english_lookalike": "label equals an English lemma once accents, case, spaces and punctuation are stripped",
    "duplicate": "the same label names more than one class",
    "langid_other": "langid confidently assigns the label to another language (a hint: labels are short)",
    "ambiguous_source": "the English lemma has other senses and only one of the class's disagreeing sources gives the "
    "label (labels.rules.polysemy)",
}
SEVERITIES = ("error", "warning", "info")
AUDIT_TAGGERS = ("blank_v1", "script_v1", "english_lookalike_v1", "duplicate_v1", "langid_rank_v1")


@dataclass(frozen=True)
class LangidPolicy:
    """`audit.langid`: how far langid is trusted on labels, which are mostly one or two words."""

    min_chars: int = setting(
        8, "shorter labels: a langid disagreement is reported, never counted as confident", minimum=0
    )
    min_probability: float = setting(0.9, "a disagreement is confident from this probability on", minimum=0, maximum=1)
    enabled: bool = setting(True, "run langid.py on every label")


def audit_rules(langid: LangidPolicy = LangidPolicy(), is_english: bool = False) -> dict[str, Any]:
    """The checks as thresholds on the tagger columns: check -> {column: condition}.

    langid disagrees with most one- or two-word labels, so `langid_other` judges only labels
    of at least `min_chars` characters that langid assigns with at least `min_probability`.
    English labels are the English names themselves: nothing to compare them against.
    """
    return {
        "empty_label": {"blank_v1__empty": {"equals": False}, "blank_v1__padded": {"equals": False}},
        "script_mismatch": {"script_v1__mismatch": {"equals": False}},
        "han_variant": {"script_v1__han_mismatch": {"equals": False}},
        "english_lookalike": None if is_english else {"english_lookalike_v1__match": {"equals": False}},
        "duplicate": {"duplicate_v1__is_duplicate": {"equals": False}},
        "langid_other": {
            "langid_rank_v1__rank": {"equals": 1, "missing": "fail"},
            "when": {
                "langid_rank_v1__chars": {"min": langid.min_chars},
                "langid_rank_v1__top_prob": {"min": langid.min_probability, "missing": "fail"},
            },
        },
    }


def _detail(check: str, row: Mapping[str, Any], expected_scripts: Sequence[str]) -> str:
    """What a flagged row shows on the page, from its tagger columns."""
    if check == "empty_label":
        return "empty" if row["blank_v1__empty"] else "leading/trailing whitespace"
    if check == "script_mismatch":
        return f"{row['script_v1__dominant']}, expected {'/'.join(sorted(expand_scripts(expected_scripts)))}"
    if check == "han_variant":
        (want,) = {script for script in expected_scripts if script in ("Hans", "Hant")}
        return f"{row['script_v1__han_variant']} characters, expected {want}"
    if check == "english_lookalike":
        other = row["english_lookalike_v1__lemma_class"]
        where = "this class" if other == row["id"] else f"class {other}"
        return f"English '{row['english_lookalike_v1__lemma']}' ({where})"
    if check == "duplicate":
        return "also class " + ", ".join(str(other) for other in row["duplicate_v1__others"])
    if check == "langid_other":
        return f"{row['langid_rank_v1__top']} p={row['langid_rank_v1__top_prob']:.2f}"
    raise KeyError(f"audit check {check!r} has no detail")


def flag_labels(
    labels: Mapping[int, str],
    expected_scripts: Sequence[str] = (),
    english_lemmas: Mapping[int, Sequence[str]] | None = None,
    langid_code: str | None = None,
    rank: LangidRanking | None = None,
    policy: LangidPolicy = LangidPolicy(),
    is_english: bool = False,
) -> tuple[dict[str, dict[int, str]], dict[str, Any]]:
    """Every check over one language's labels ({class_idx: label}).

    Returns ({check: {class_idx: detail}}, langid summary). `rank(text)` is langid's ranking
    [(code, probability), ...]; None: langid not run.
    """
    lang = "labels"  # one language at a time
    context = TextContext(
        expected_scripts={lang: tuple(expected_scripts)},
        langid_codes={lang: langid_code},
        langid_rank=rank,
        english_lemmas=english_lemmas or {},
    )
    rows = [{"id": idx, "lang": lang, "text": labels[idx]} for idx in sorted(labels)]
    columns = run_taggers(AUDIT_TAGGERS, rows, context)
    tagged = [{**row, **{column: values[i] for column, values in columns.items()}} for i, row in enumerate(rows)]
    rules = parse_rules(audit_rules(policy, is_english), "audit checks")
    flagged: dict[str, dict[int, str]] = {check: {} for check in CHECKS}
    for row in tagged:
        for check in rejection_reasons(row, rules):
            flagged[check][row["id"]] = _detail(check, row, expected_scripts)
    return flagged, langid_summary(tagged, langid_code, rank, policy, len(flagged["langid_other"]))


def langid_summary(
    tagged: Sequence[Mapping[str, Any]],
    expected_code: str | None,
    rank: LangidRanking | None,
    policy: LangidPolicy,
    confident: int,
) -> dict[str, Any]:
    """How often langid's top language is another one: every disagreement is counted, only
    the confident ones (long label, high probability) are flagged."""
    if expected_code is None or rank is None:
        reason = "langid not run" if rank is None else "langid does not know this language"
        return {"status": "not checked", "reason": reason}
    disagree = sum(
        row["langid_rank_v1__top"] is not None and row["langid_rank_v1__top"] != expected_code for row in tagged
    )
    return {
        "status": "checked",
        "code": expected_code,
        "disagree": disagree,
        "disagree_confident": confident,
        "disagree_share": round(disagree / len(tagged), 4) if tagged else 0.0,
        "policy": {"min_chars": policy.min_chars, "min_probability": policy.min_probability},
    }


# --- aggregates --------------------------------------------------------------------------------


def source_family(source: str) -> str:
    """`omw:cow` -> `omw`; BabelNet sources keep their own name (`WIKI`, `WN`...)."""
    return source.split(":", 1)[0]


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
    rank: LangidRanking | None,
    policy: AuditPolicy,
    is_english: bool = False,
) -> dict[str, Any]:
    """All label checks for one language.

    rows: that language's labels.parquet rows (class_idx, label, source, n_dropped_*).
    Returns {classes_kept, dropped, source_mix, checks: {name: {severity, count}},
    flags: {class_idx: [[check, detail], ...]}, langid, errors, warnings, quality_score}.
    """
    labels = {int(row["class_idx"]): str(row["label"]) for row in rows}
    flagged, langid = flag_labels(
        labels, expected_scripts, english_lemmas, langid_code, rank, policy.langid, is_english
    )
    # decided by the labels stage, which sees the candidates (labels.parquet's `ambiguous_source`)
    flagged["ambiguous_source"] = {
        int(row["class_idx"]): f"only {row['source']}" for row in rows if row.get("ambiguous_source")
    }

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
            check: {"severity": policy.severity.get(check, "warning"), "count": counts[check], "meaning": CHECKS[check]}
            for check in CHECKS
        },
        "langid": langid,
        "flags": {str(idx): flags[idx] for idx in sorted(flags)},
        "errors": by_severity["error"],
        "warnings": by_severity["warning"],
        "quality_score": quality_score(len(labels), policy.total_classes, counts, policy.score_weights),
    }


def reference_agreement(labels: Mapping[int, str], reference: Mapping[int, str]) -> dict[str, Any]:
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
