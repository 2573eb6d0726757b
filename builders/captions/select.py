"""Selection: per caption and language, the best hypothesis that passes the checks.

Pure functions over plain rows (dicts holding the hypothesis and its attribute columns).
The checks are thresholds as data (`captions.select` in params.yaml, a default and
per-language overrides), applied by the one threshold step of `babelforge.core.taggers`:
re-thresholding never recomputes an attribute.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import babelforge.core.text_taggers  # noqa: F401  (registers blank_v1)
from babelforge.core import taggers
from babelforge.core.params import for_profile
from babelforge.core.taggers import Rule, rejection_reasons

KIWI_SCORE = "kiwi_v1__score"
# Taggers run at selection time: instant facts of the hypothesis text itself (is it blank),
# so attributes/ holds the scores that cost something to compute.
SELECT_TAGGERS = ("blank_v1",)

# The checks, in the order reasons are reported (`captions.select.default`): rejection reason ->
# {attribute column: condition}, per profile where they differ. The random tiny NLLB of `sample`
# writes in no language and loops ("EEEEEEEE"): the real thresholds (full) reject every caption, so
# `sample` gates copies only, to give selection, percentiles and later stages data to work on.
CHECKS: dict[str, Any] = {
    "empty": {"blank_v1__empty": {"equals": False}},
    "langid": {"langid_v1__prob": {"min": {"sample": None, "full": 0.5}}},  # langid's probability of the language
    "script": {"script_v1__share": {"min": {"sample": None, "full": 0.5}}},  # share of letters in its scripts
    # the English source, copied (overlap: share of hypothesis words found in the source)
    "copy": {"copy_v1__exact": {"equals": False}, "copy_v1__overlap": {"max": 0.8}},
    # a decoder loop: a word n-gram, or a letter n-gram (unspaced scripts, "lalala"), repeated in a row
    "repetition": {
        "repetition_v1__longest_run": {"max": {"sample": None, "full": 3}},
        "repetition_v1__longest_letter_run": {"max": {"sample": None, "full": 5}},
    },
    "kiwi": {KIWI_SCORE: {"min": None}},
    # off by default: a long caption is kept, scored on its beginning, and counted (quality.json)
    "truncated": {"source_truncated": {"equals": None}, "kiwi_v1__truncated": {"equals": None}},
}
# The sample profile's checks.
DEFAULT_CHECKS: dict[str, Any] = for_profile(CHECKS, "sample", "captions.select.default")


def with_text_tags(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with the columns of the selection-time taggers added."""
    columns = taggers.run_taggers(SELECT_TAGGERS, rows, None)
    return [{**row, **{name: values[i] for name, values in columns.items()}} for i, row in enumerate(rows)]


def failed_checks(row: Mapping[str, Any], rules: Sequence[Rule]) -> list[str]:
    """The checks a (tagged) hypothesis row fails, in rule order; empty when it passes."""
    return rejection_reasons(row, rules)


@dataclass(frozen=True)
class Choice:
    """The outcome for one (caption, language)."""

    best: Mapping[str, Any] | None  # the kept hypothesis row, None when nothing passed
    reason: str | None  # why nothing was kept, e.g. "rejected:langid=8,script=3"
    n_hypotheses: int
    n_passed: int


def choose(candidates: Sequence[Mapping[str, Any]], rules: Sequence[Rule]) -> Choice:
    """Drop hypotheses failing a check, keep the highest Kiwi score.

    Ties on the score go to the lower `hyp_rank` (the translator's own preference), so
    the choice never depends on row order. A hypothesis without a Kiwi score (None: Kiwi did
    not run; NaN: it could not score the text) ranks below every scored one. With nothing
    left, the reason counts how many hypotheses failed each check (one hypothesis may fail
    several).
    """
    if not candidates:
        return Choice(None, "no_hypotheses", 0, 0)
    passed, failures = [], {rule.reason: 0 for rule in rules}
    for row in candidates:
        failed = failed_checks(row, rules)
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


def headline(quality: Mapping[str, Mapping[str, Any]], input_rows: Mapping[str, Any]) -> dict[str, Any]:
    """captions.json of paths.metrics from quality.json's per-language figures: totals and means
    over languages (a per-language entry would be one `dvc exp show` column per language and figure),
    the input's rows read, quarantined and truncated (`input.json` of captions_translate) and the
    pairs Kiwi scored cut."""

    def mean(key: str) -> float | None:
        values = [figures[key] for figures in quality.values() if figures.get(key) is not None]
        return round(sum(values) / len(values), 6) if values else None

    return {
        "input_rows": input_rows["rows"],
        "input_quarantined": input_rows["quarantined"],
        "input_truncated": input_rows.get("truncated"),
        "languages": len(quality),
        "captions": sum(figures["n_captions"] for figures in quality.values()),
        "selected": sum(figures["n_selected"] for figures in quality.values()),
        "without_translation": sum(figures["n_without_translation"] for figures in quality.values()),
        # (caption, hypothesis) pairs longer than the Kiwi encoder reads, scored on their beginning
        "kiwi_truncated": sum(figures["n_kiwi_truncated"] for figures in quality.values()),
        "kiwi_mean": mean("kiwi_mean"),
        "chrf_corpus_mean": mean("chrf_corpus"),
        "chrf_corpus_top_hypothesis_mean": mean("chrf_corpus_top_hypothesis"),
    }
