"""What the specificity, short-form and polysemy rules know about each (class, language): from
WordNet's view of the class's English name (`ClassEnglish`) and from the other classes of the
language (`class_evidence`), as the `ClassEvidence` the ranking reads (ranking.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from babelforge.babel_imagenet.forms import Form, english_key
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.ranking import ClassEvidence, is_one_word, split_forms


def is_compound_name(clip_name: str, lemmas: Iterable[str]) -> bool:
    """The English name has a head a translator may render alone: the CLIP name has several
    words (`block plane`), or one English name ends with another (`oscilloscope`, `scope`). A
    WordNet lemma of several words alone does not count: most animals have one (`Sus scrofa`,
    `king of beasts`), and their one-word names are no short forms."""
    names = {english_key(name) for name in (clip_name, *lemmas)}
    return not is_one_word(clip_name) or any(a != b and a.endswith(b) for a in names for b in names)


@dataclass(frozen=True)
class ClassEnglish:
    """A class's English name as WordNet sees it (the wordnet artifact's columns)."""

    compound: bool = False  # a lemma or the CLIP name has several words
    ambiguous: bool = False  # `other_senses` is not empty
    broader: frozenset[str] = frozenset()  # casefolded English lemmas of every hypernym (`broader_lemmas`)

    @classmethod
    def of(
        cls, clip_name: str, lemmas: Iterable[str], broader: Iterable[str], other_senses: Iterable[str]
    ) -> ClassEnglish:
        return cls(
            compound=is_compound_name(clip_name, lemmas),
            ambiguous=any(True for _ in other_senses),
            broader=frozenset(english_key(lemma) for lemma in broader),
        )


def class_evidence(
    grouped: Mapping[tuple[str, str], Sequence[Form]],
    english_keys: frozenset[str],
    rules: Rules,
    english: Mapping[str, ClassEnglish],
) -> Callable[[str, str], ClassEvidence]:
    """(lang, synset) -> the ClassEvidence of the switched-on rules. Specificity compares a
    candidate's support (distinct sources) in the class with its support in every other class of
    the language: given by more sources elsewhere, it is not specific to this class. (Equal
    support says nothing: `coffre` is both *storage chest* and *safe* in one source each.)"""
    if rules.ranking != "agreement":
        return lambda lang, synset: ClassEvidence()
    support: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    if rules.specificity:
        for (lang, synset), group in grouped.items():
            preferred, low_precision, _, _ = split_forms(group, english_keys, rules.low_precision_sources)
            sources: dict[str, set[str]] = defaultdict(set)
            for form in preferred or low_precision:
                sources[form.key].add(form.source)
            for key, given in sources.items():
                support[(lang, key)][synset] = len(given)

    def evidence(lang: str, synset: str) -> ClassEvidence:
        name = english.get(synset, ClassEnglish())

        def elsewhere(key: str) -> bool:
            by_class = support.get((lang, key), {})
            here = by_class.get(synset, 0)
            return key in name.broader or any(n > here for other, n in by_class.items() if other != synset)

        return ClassEvidence(
            elsewhere=elsewhere if rules.specificity else None,
            compound=rules.short_form and name.compound,
            ambiguous=rules.polysemy and name.ambiguous,
        )

    return evidence
