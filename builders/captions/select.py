"""Selection: per caption and language, the best hypothesis that passes the checks.

Pure functions over plain rows (dicts holding the hypothesis and its attribute
columns). Thresholds come from `params.yaml` (`captions.select`): a default and
per-language overrides, so re-thresholding never recomputes an attribute.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, fields, replace
from typing import Any, Iterable, Mapping, Sequence

# Attribute columns the checks read (`<tagger>_v<version>__<attribute>`).
LANGID_PROB = "langid_v1__prob"
SCRIPT_SHARE = "script_v1__share"
COPY_OVERLAP = "copy_v1__overlap"
COPY_EXACT = "copy_v1__exact"
REPEAT_RUN = "repetition_v1__longest_run"
LETTER_RUN = "repetition_v1__longest_letter_run"
KIWI_SCORE = "kiwi_v1__score"

# Why a hypothesis was dropped, in the order reasons are reported.
CHECKS = ("empty", "langid", "script", "copy", "repetition", "kiwi")


@dataclass(frozen=True)
class Thresholds:
    """Limits of the checks; None turns a check off."""

    min_langid_prob: float | None = 0.5    # langid probability of the expected language (in-play set)
    min_script_share: float | None = 0.5   # share of letters in the language's expected scripts
    max_copy_overlap: float | None = 0.8   # share of hypothesis words found in the English source
    max_repeat_run: int | None = 3         # a word n-gram repeated more often in a row is a decoder loop
    max_letter_run: int | None = 5         # the same for letter n-grams ("lalalala"; unspaced scripts)
    min_kiwi: float | None = None          # optional quality floor on the COMETKiwi score

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], where: str = "captions.select") -> "Thresholds":
        known = {field.name for field in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"{where}: unknown threshold(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        return cls(**values)


def thresholds_by_language(config: Mapping[str, Any], languages: Iterable[str]) -> dict[str, Thresholds]:
    """`{default: {...}, languages: {key: {...}}}` -> the thresholds of each language."""
    default = Thresholds.from_mapping(config.get("default") or {}, "captions.select.default")
    overrides = config.get("languages") or {}
    result = {}
    for lang in languages:
        values = overrides.get(lang) or {}
        Thresholds.from_mapping(values, f"captions.select.languages.{lang}")
        result[lang] = replace(default, **values)
    return result


def _below(value: Any, floor: float | None) -> bool:
    """NaN / missing means "not measurable" (e.g. langid does not know the language): passes."""
    return floor is not None and value is not None and not math.isnan(value) and value < floor


def _above(value: Any, ceiling: float | None) -> bool:
    return ceiling is not None and value is not None and not math.isnan(value) and value > ceiling


def failed_checks(row: Mapping[str, Any], thresholds: Thresholds) -> list[str]:
    """The checks (names from CHECKS) a hypothesis row fails; empty when it passes."""
    failed = []
    if not str(row.get("text") or "").strip():
        failed.append("empty")
    if _below(row.get(LANGID_PROB), thresholds.min_langid_prob):
        failed.append("langid")
    if _below(row.get(SCRIPT_SHARE), thresholds.min_script_share):
        failed.append("script")
    if bool(row.get(COPY_EXACT)) or _above(row.get(COPY_OVERLAP), thresholds.max_copy_overlap):
        failed.append("copy")
    if _above(row.get(REPEAT_RUN), thresholds.max_repeat_run) or _above(row.get(LETTER_RUN), thresholds.max_letter_run):
        failed.append("repetition")
    if _below(row.get(KIWI_SCORE), thresholds.min_kiwi):
        failed.append("kiwi")
    return failed


@dataclass(frozen=True)
class Choice:
    """The outcome for one (caption, language)."""

    best: Mapping[str, Any] | None     # the kept hypothesis row, None when nothing passed
    reason: str | None                 # why nothing was kept, e.g. "rejected:langid=8,script=3"
    n_hypotheses: int
    n_passed: int


def choose(candidates: Sequence[Mapping[str, Any]], thresholds: Thresholds) -> Choice:
    """Drop hypotheses failing a check, keep the highest Kiwi score.

    Ties on the score go to the lower `hyp_rank` (the translator's own preference), so
    the choice never depends on row order. With nothing left, the reason counts how
    many hypotheses failed each check (one hypothesis may fail several).
    """
    if not candidates:
        return Choice(None, "no_hypotheses", 0, 0)
    passed, failures = [], {check: 0 for check in CHECKS}
    for row in candidates:
        failed = failed_checks(row, thresholds)
        for check in failed:
            failures[check] += 1
        if not failed:
            passed.append(row)
    if not passed:
        counts = ",".join(f"{check}={count}" for check, count in failures.items() if count)
        return Choice(None, f"rejected:{counts}", len(candidates), 0)

    def key(row):
        score = row.get(KIWI_SCORE)
        score = -math.inf if score is None or math.isnan(score) else score
        return (-score, row["hyp_rank"])

    return Choice(min(passed, key=key), None, len(candidates), len(passed))


def percentiles(scores: Sequence[float]) -> list[float]:
    """Percentile rank of each score within the list: 100 * (scores strictly below) / n.

    Tied scores share one percentile, so a tie never straddles a quality split.
    """
    ordered = sorted(scores)
    n = len(ordered)
    return [100.0 * bisect.bisect_left(ordered, score) / n for score in scores]


def quality_flags(percentile: float, bottom_percent: float = 25.0) -> tuple[bool, bool]:
    """(in the bottom `bottom_percent` %, in the top 100 - `bottom_percent` %) of one language.

    The paper splits evaluation by translation quality into the worst quarter and the
    rest; the two flags partition the selected captions of a language.
    """
    bottom = percentile < bottom_percent
    return bottom, not bottom
