"""chrF of a translation against a human one (sacrebleu's chrF, character 6-grams, beta 2)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence


@functools.lru_cache(maxsize=1)
def _metric():
    from sacrebleu.metrics import CHRF

    return CHRF()


def sentence_chrf(hypothesis: str, reference: str | None) -> float:
    """chrF (0-100) of one hypothesis; NaN when there is no reference to compare with."""
    if reference is None or not reference.strip():
        return math.nan
    return float(_metric().sentence_score(hypothesis, [reference]).score)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus-level chrF (statistics pooled over all pairs), the figure MT papers report."""
    if not hypotheses:
        return math.nan
    return float(_metric().corpus_score(list(hypotheses), [list(references)]).score)
