"""Rule 1 of the label procedure (labels.py): the clean forms of the senses, and the key a form is
compared with English lemmas by.

`clean_senses` is the one loop from senses to forms: the labels stage counts what cleaning did, the
candidates table lists each lemma cleaning dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from babelforge.babel_imagenet.cleaning import clean_lemma, normalise_lemma
from babelforge.lexicon.senses import Sense


def english_key(text: str) -> str:
    """The form compared against English lemmas: normalised and casefolded."""
    return normalise_lemma(text).casefold()


def english_lemma_keys(lemmas_per_class: Iterable[Iterable[str]]) -> frozenset[str]:
    return frozenset(english_key(lemma) for lemmas in lemmas_per_class for lemma in lemmas)


@dataclass(frozen=True)
class Form:
    """One clean form of a sense, in the language it ended up in."""

    synset: str
    lang: str
    label: str
    raw: str  # the lemma as the source wrote it
    source: str
    is_translation: bool
    rank: int  # the sense's rank in its source order (in its own language)
    part: int = 0  # position among the forms one raw lemma gave
    routed_from: str | None = None
    cleaned: tuple[str, ...] = ()
    flag: str = ""  # `mixed_script`: a span in a script the language does not use, not strippable (purity.py)

    @property
    def key(self) -> str:
        return self.label.casefold()


def clean_senses(
    senses: Iterable[Sense], tally: Counter, dropped: list[tuple[object, str]] | None = None
) -> list[Form]:
    """The clean forms of the senses; dropped and cleaned lemmas counted in `tally[(lang, column)]`,
    and each sense whose lemma is dropped appended to `dropped` as (sense, `dropped_<kind>`) when given."""
    forms = []
    for sense in senses:
        result = clean_lemma(sense.lemma)
        for kind in result.cleaned:
            tally[(sense.lang, f"n_cleaned_{kind}")] += 1
        if result.dropped:
            tally[(sense.lang, f"n_dropped_{result.dropped}")] += 1
            if dropped is not None:
                dropped.append((sense, f"dropped_{result.dropped}"))
        forms.extend(
            Form(
                sense.synset,
                sense.lang,
                text,
                sense.lemma,
                sense.source,
                sense.is_translation,
                sense.rank,
                part,
                cleaned=result.cleaned,
            )
            for part, text in enumerate(result.forms)
        )
    return forms
