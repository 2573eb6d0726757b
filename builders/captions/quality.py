"""The quality figures of the kept translations: each one's Kiwi percentile within its language with
the bottom-25 % / top-75 % flags, and quality.json's per-language figures (counts, rejection reasons,
mean Kiwi, chrF against the human translations), gathered shard by shard so memory follows the shard.
Pure: plain rows in, rows and figures out."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from babelforge.captions.chrf import corpus_chrf
from babelforge.captions.select import quality_flags

BOTTOM_PERCENT = 25.0


def add_quality_flags(
    rows: list[dict[str, Any]], ranks: Mapping[str, Any] | None = None, bottom_percent: float = BOTTOM_PERCENT
) -> None:
    """Per language: percentile of each kept translation's Kiwi score, and the two flags.

    `ranks` holds each language's kept scores over all shards, sorted (`QualityTally.ranks`);
    without it, the percentiles are taken within `rows`."""

    if ranks is None:
        tally = QualityTally()
        tally.add(rows, (), {})
        ranks = tally.ranks()
    for row in rows:
        row.update(kiwi_percentile=None, is_bottom_25=False, is_top_75=False)
        if _kiwi(row) is not None:
            ordered = ranks[row["lang"]]
            # what select.percentiles computes: 100 * (scores strictly below) / n
            percentile = 100.0 * int(np.searchsorted(ordered, row["kiwi_score"], side="left")) / len(ordered)
            bottom, top = quality_flags(percentile, bottom_percent)
            row.update(kiwi_percentile=percentile, is_bottom_25=bottom, is_top_75=top)


def _kiwi(row: Mapping[str, Any]) -> float | None:
    """The Kiwi score of a kept translation, or None (nothing kept, or no score)."""
    score = row["kiwi_score"]
    if row["text"] is None or score is None or math.isnan(score):
        return None
    return score


class QualityTally:
    """What quality.json and the percentiles need, gathered shard by shard: per language the
    counts and rejection reasons, the kept Kiwi scores (8 bytes each) and chrF pairs (caption
    id, translation, human reference) only where a reference exists."""

    def __init__(self):
        self.captions: Counter = Counter()
        self.selected: Counter = Counter()
        self.selected_kiwi_truncated: Counter = Counter()
        self.rejections: dict[str, Counter] = defaultdict(Counter)
        self.scores: dict[str, list] = defaultdict(list)
        self.kept_pairs: dict[str, list] = defaultdict(list)
        self.top_pairs: dict[str, list] = defaultdict(list)

    def add(
        self,
        rows: Sequence[Mapping[str, Any]],
        top_hypotheses: Sequence[Mapping[str, Any]],
        references: Mapping[tuple[str, str], str],
    ) -> None:
        """One shard: its chosen rows, its translator-best hypotheses (hyp_rank 0) and its human
        references by (caption_id, lang)."""

        scores: dict[str, list] = defaultdict(list)
        for row in rows:
            lang = row["lang"]
            self.captions[lang] += 1
            if row["reason"]:
                self.rejections[lang].update(
                    check.split("=")[0] for check in row["reason"].removeprefix("rejected:").split(",")
                )
            if row["text"] is None:
                continue
            self.selected[lang] += 1
            if row.get("kiwi_truncated"):
                self.selected_kiwi_truncated[lang] += 1
            if _kiwi(row) is not None:
                scores[lang].append(row["kiwi_score"])
            reference = references.get((row["caption_id"], lang))
            if reference is not None:
                self.kept_pairs[lang].append((row["caption_id"], row["text"], reference))
        for lang, values in scores.items():
            self.scores[lang].append(np.asarray(values, dtype=np.float64))
        for row in top_hypotheses:
            reference = references.get((row["caption_id"], row["lang"]))
            if reference is not None:
                self.top_pairs[row["lang"]].append((row["caption_id"], row["text"], reference))

    def ranks(self) -> dict[str, Any]:
        """Each language's kept Kiwi scores over all shards, sorted (for percentiles)."""

        return {
            lang: np.sort(np.concatenate(self.scores[lang])) if self.scores.get(lang) else np.zeros(0)
            for lang in self.captions
        }

    def summary(self, kiwi_truncated: Mapping[str, int] | None = None) -> dict[str, Any]:
        """Per-language figures for quality.json; `kiwi_truncated`: {lang: hypotheses whose (source,
        hypothesis) pair was longer than the Kiwi encoder reads} (attributes' kiwi_v1__truncated).

        `rejections` counts, per check, the captions left without translation where that
        check failed at least one hypothesis. `chrf_corpus` is chrF of the kept translations
        against the human ones; `chrf_corpus_top_hypothesis` that of the translator's own best
        (hyp_rank 0) over all captions, the unfiltered baseline. The mean Kiwi score is an
        exactly rounded sum (`math.fsum`): the same whatever the shard order. `n_kiwi_truncated`
        counts the hypotheses scored on the beginning of their pair, `n_selected_kiwi_truncated`
        the kept translations among them.
        """
        kiwi_truncated = kiwi_truncated or {}
        summary = {}
        for lang in sorted(self.captions):
            parts = self.scores.get(lang, [])
            n_scores = sum(len(part) for part in parts)
            # exactly rounded, part by part (no list of every score as Python floats)
            total = math.fsum(value for part in parts for value in part.tolist())
            summary[lang] = {
                "n_captions": self.captions[lang],
                "n_selected": self.selected[lang],
                "n_without_translation": self.captions[lang] - self.selected[lang],
                "rejections": dict(sorted(self.rejections[lang].items())),
                "kiwi_mean": round(total / n_scores, 6) if n_scores else None,
                "n_kiwi_truncated": kiwi_truncated.get(lang, 0),
                "n_selected_kiwi_truncated": self.selected_kiwi_truncated[lang],
                "n_with_reference": len(self.kept_pairs[lang]),
                "chrf_corpus": _corpus_chrf(self.kept_pairs[lang]),
                "chrf_corpus_top_hypothesis": _corpus_chrf(self.top_pairs[lang]),
            }
        return summary


def _corpus_chrf(pairs: Sequence[tuple[str, str, str]]):
    """Corpus chrF of (caption id, translation, reference) triples, in caption id order."""

    if not pairs:
        return None
    ordered = sorted(pairs)
    return round(corpus_chrf([hyp for _, hyp, _ in ordered], [ref for _, _, ref in ordered]), 4)
