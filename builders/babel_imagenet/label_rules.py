"""The settings of the label procedure (the `labels` group of params.yaml, resolved): what every
rule module reads, so it knows no rule."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

DEFAULT_LOW_PRECISION_SOURCES = frozenset({"WIKIRED", "WIKIDATA_ALIAS"})
Ranking = Literal["first", "agreement"]


@dataclass(frozen=True)
class Rules:
    """The settings of the procedure (the `labels` group of params.yaml, resolved)."""

    ranking: Ranking = "first"
    source_priority: tuple[str, ...] = ("wikt", "omw", "cldr")
    source_priority_by_lang: Mapping[str, Sequence[str]] = field(default_factory=dict)
    low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES
    resolve_duplicates: bool = False
    # (lang, label) -> word frequency (frequency.frequency_lookup); None: the frequency rule is off
    frequency: Callable[[str, str], float | None] | None = field(default=None, compare=False)
    specificity: bool = False  # agreement: a candidate specific to the class beats one shared with another
    short_form: bool = False  # agreement: a one-word, one-source short form of a compound name loses
    polysemy: bool = False  # agreement: where the English lemma is ambiguous, a supported candidate wins
    script_span: bool = False  # strip a foreign-script span, else pass the form over (purity.py)
    # (lang, other lang, label) -> Zipf lean to the other (frequency.language_lean); None: purity rule off
    purity: Callable[[str, str, str], float | None] | None = field(default=None, compare=False)
    # agreement: each language's source order from its sources' estimated precision (trust.py) where the
    # evidence suffices; source_priority stays the order elsewhere
    learned_priority: bool = False

    def priority(self, lang: str) -> Sequence[str]:
        return self.source_priority_by_lang.get(lang, self.source_priority)
