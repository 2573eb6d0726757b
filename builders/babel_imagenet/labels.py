"""Babel-ImageNet label selection: the paper's procedure as pure functions.

For each (class, language), over the senses in source order:
  1. normalise the lemma (`_` -> space, Unicode NFC, whitespace collapsed and stripped);
  2. drop it if its casefolded form equals an English lemma of *any* of the 1,000 classes
     (an untranslated English word is not a label in that language);
  3. drop it if the source marks it as an automatic translation;
  4. skip senses from low-precision sources (BabelNet's WIKIRED, WIKIDATA_ALIAS) unless no
     other sense is left;
  5. take the first remaining sense; no sense left = no label for that class in that language.
A sense that is both English and a translation counts as English (rule 2 comes first).
Languages keep their labels only with at least `min_classes` classes.
"""
from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from builders.lexicon.senses import Sense

DEFAULT_LOW_PRECISION_SOURCES = frozenset({"WIKIRED", "WIKIDATA_ALIAS"})
# Resource groups by number of classes (upper bounds inclusive); reproduces the paper's
# 17/32/35/16 split of its 100 evaluation languages.
GROUP_BOUNDS = (("very-low", 100), ("low", 333), ("mid", 666), ("high", 1000))
ENGLISH = "eng_Latn"


def normalise_lemma(lemma: str) -> str:
    text = unicodedata.normalize("NFC", lemma.replace("_", " "))
    return " ".join(text.split())


def english_key(text: str) -> str:
    """The form compared against English lemmas: normalised and casefolded."""
    return normalise_lemma(text).casefold()


def english_lemma_keys(lemmas_per_class: Iterable[Iterable[str]]) -> frozenset[str]:
    return frozenset(english_key(lemma) for lemmas in lemmas_per_class for lemma in lemmas)


@dataclass(frozen=True)
class LabelChoice:
    synset: str
    lang: str
    label: str | None          # None: every sense was dropped
    source: str | None
    rank: int | None           # the chosen sense's rank in its source order
    n_senses: int
    n_dropped_english: int
    n_dropped_mt: int
    n_dropped_low_precision: int  # low-precision senses passed over for a better one
    used_low_precision: bool


def choose_label(senses: Sequence[Sense], english_keys: frozenset[str],
                 low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES) -> LabelChoice:
    """Apply the rules to the senses of one (synset, language)."""
    ordered = sorted(senses, key=lambda sense: sense.rank)
    if not ordered:
        raise ValueError("choose_label needs at least one sense")
    synset, lang = ordered[0].synset, ordered[0].lang
    n_english = n_mt = 0
    preferred: list[Sense] = []
    low_precision: list[Sense] = []
    for sense in ordered:
        if english_key(sense.lemma) in english_keys:
            n_english += 1
        elif sense.is_translation:
            n_mt += 1
        elif not normalise_lemma(sense.lemma):
            continue
        elif sense.source in low_precision_sources:
            low_precision.append(sense)
        else:
            preferred.append(sense)
    chosen = preferred[0] if preferred else (low_precision[0] if low_precision else None)
    return LabelChoice(
        synset=synset,
        lang=lang,
        label=normalise_lemma(chosen.lemma) if chosen else None,
        source=chosen.source if chosen else None,
        rank=chosen.rank if chosen else None,
        n_senses=len(ordered),
        n_dropped_english=n_english,
        n_dropped_mt=n_mt,
        n_dropped_low_precision=len(low_precision) if preferred else 0,
        used_low_precision=bool(chosen) and not preferred,
    )


def choose_labels(senses: Iterable[Sense], english_keys: frozenset[str],
                  low_precision_sources: frozenset[str] = DEFAULT_LOW_PRECISION_SOURCES,
                  exclude_langs: Iterable[str] = (ENGLISH,)) -> list[LabelChoice]:
    """One LabelChoice per (synset, language) that has senses, sorted by (lang, synset)."""
    excluded = set(exclude_langs)
    grouped: dict[tuple[str, str], list[Sense]] = defaultdict(list)
    for sense in senses:
        if sense.lang not in excluded:
            grouped[(sense.lang, sense.synset)].append(sense)
    return [choose_label(group, english_keys, low_precision_sources) for _, group in sorted(grouped.items())]


def resource_group(n_classes: int) -> str:
    for name, upper in GROUP_BOUNDS:
        if n_classes <= upper:
            return name
    raise ValueError(f"more classes than ImageNet-1k has: {n_classes}")


def kept_languages(choices: Iterable[LabelChoice], min_classes: int) -> dict[str, int]:
    """Languages with at least `min_classes` labelled classes, and their class counts."""
    counts = Counter(choice.lang for choice in choices if choice.label is not None)
    return {lang: n for lang, n in sorted(counts.items()) if n >= min_classes}


def english_rows(clip_names: Mapping[str, str]) -> list[LabelChoice]:
    """English labels are the standard CLIP class names (synset -> name)."""
    return [
        LabelChoice(synset, ENGLISH, name, "clip", 0, 1, 0, 0, 0, False)
        for synset, name in sorted(clip_names.items())
    ]
