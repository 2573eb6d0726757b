"""The label chosen for one (class, language) and how it is changed afterwards: `choose_label`
applies rules 3-6 (ranking.py), `with_candidate` puts another candidate in its place (a duplicate
resolved, the lexicon layer's choice: `rechoose`), `drop_label` takes a label away (the precision
floor), `english_rows` gives English its CLIP names."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.label_rules import DEFAULT_LOW_PRECISION_SOURCES, Ranking
from babelforge.babel_imagenet.ranking import (
    Candidate,
    ClassEvidence,
    needs_support,
    rank_candidates,
    rank_reason,
    split_forms,
)
from babelforge.core.languages import ENGLISH


@dataclass(frozen=True)
class LabelChoice:
    synset: str
    lang: str
    label: str | None  # None: every form was dropped
    source: str | None
    rank: int | None  # the chosen sense's rank in its source order
    n_senses: int  # clean forms of the class in the language (after routing)
    n_dropped_english: int
    n_dropped_mt: int
    n_dropped_low_precision: int  # low-precision forms passed over for a better one
    used_low_precision: bool
    raw_lemma: str | None = None
    routed_from: str | None = None
    n_sources: int = 0  # distinct sources that give the chosen label
    # only | first | vernacular | specificity | agreement | short_form | polysemy | frequency_unused |
    # frequency | source_priority | learned_priority (a learned source order) | source_order | unique;
    # purity | script_span (a form of another language or with a foreign-script span would have won) |
    # mixed_script (kept with such a span: the class has nothing else)
    rank_reason: str = ""
    ambiguous_english: bool = False  # the class's English lemmas name other synsets (polysemy rule on)
    candidates: tuple[Candidate, ...] = field(default=(), compare=False, repr=False)

    @property
    def ambiguous_source(self) -> bool:
        """The audit's `ambiguous_source`: the English lemma has other senses, the class's sources
        disagree (candidates from several sources) and the label has no support (one source, not a
        phrase narrowing another candidate). Where one source covers a class nothing could support
        its label: not flagged, or most labels of a one-source language would be."""
        chosen = next((c for c in self.candidates if self.label and c.key == self.label.casefold()), None)
        if not (self.ambiguous_english and chosen and needs_support(chosen, [c.key for c in self.candidates])):
            return False
        return len({source for candidate in self.candidates for source in candidate.sources}) > 1


def choose_label(
    forms: Sequence[Form],
    english_keys: frozenset[str],
    low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES,
    ranking: Ranking = "first",
    priority: Sequence[str] = (),
    taxa: Sequence[str] = (),
    zipf: Callable[[str], float | None] | None = None,
    evidence: ClassEvidence = ClassEvidence(),
) -> LabelChoice:
    """Apply rules 3-6 to the forms of one (synset, language)."""
    if not forms:
        raise ValueError("choose_label needs at least one form")
    synset, lang = forms[0].synset, forms[0].lang
    preferred, low_precision, n_english, n_mt = split_forms(forms, english_keys, low_precision_sources)
    candidates = rank_candidates(preferred or low_precision, ranking, priority, taxa, zipf, evidence)
    chosen = candidates[0] if candidates else None
    return LabelChoice(
        synset=synset,
        lang=lang,
        label=chosen.label if chosen else None,
        source=chosen.form.source if chosen else None,
        rank=chosen.form.rank if chosen else None,
        n_senses=len(forms),
        n_dropped_english=n_english,
        n_dropped_mt=n_mt,
        n_dropped_low_precision=len(low_precision) if preferred else 0,
        used_low_precision=bool(chosen) and not preferred,
        raw_lemma=chosen.form.raw if chosen else None,
        routed_from=chosen.form.routed_from if chosen else None,
        n_sources=len(chosen.sources) if chosen else 0,
        rank_reason=rank_reason(candidates, ranking) if chosen else "",
        ambiguous_english=evidence.ambiguous,
        candidates=tuple(candidates),
    )


# rank_reason of a class the precision floor dropped (labels.precision_floor, precision.py)
PRECISION_FLOOR = "precision_floor"


# rank_reason of a label the lexicon layer chose over the rules' first (labels.choose: lexicon)
LEXICON_CHOICE = "lexicon"


def with_candidate(choice: LabelChoice, candidate: Candidate, reason: str) -> LabelChoice:
    """The choice with `candidate` as its label instead, chosen for `reason` (its rank_reason)."""
    return replace(
        choice,
        label=candidate.label,
        source=candidate.form.source,
        rank=candidate.form.rank,
        raw_lemma=candidate.form.raw,
        routed_from=candidate.form.routed_from,
        n_sources=len(candidate.sources),
        rank_reason=reason,
    )


def rechoose(choice: LabelChoice, label: str) -> LabelChoice:
    """The choice with its candidate `label` (compared casefolded) chosen instead of the rules' first."""
    key = label.casefold()
    candidate = next((c for c in choice.candidates if c.key == key), None)
    if candidate is None:
        raise ValueError(f"{choice.lang} {choice.synset}: {label!r} is none of the class's candidates")
    return with_candidate(choice, candidate, LEXICON_CHOICE)


def drop_label(choice: LabelChoice, reason: str) -> LabelChoice:
    """The choice without its label, for `reason` (its candidates stay: candidates.parquet lists them)."""
    return replace(
        choice, label=None, source=None, rank=None, raw_lemma=None, routed_from=None, n_sources=0, rank_reason=reason
    )


def english_rows(clip_names: Mapping[str, str]) -> list[LabelChoice]:
    """English labels are the standard CLIP class names (synset -> name)."""
    return [
        LabelChoice(
            synset, ENGLISH, name, "clip", 0, 1, 0, 0, 0, False, raw_lemma=name, n_sources=1, rank_reason="only"
        )
        for synset, name in sorted(clip_names.items())
    ]
