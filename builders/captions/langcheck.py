"""Cheap checks on one translation hypothesis: language, script, copy, repetition.

Each check is a pure function of plain strings; the tag stage runs them over every
hypothesis and stores the numbers, and selection thresholds them later.
"""
from __future__ import annotations

import copy
import functools
import math
import re
import unicodedata
from typing import Mapping, Sequence

# Scripts by the word that opens a character's Unicode name; the first word that is a
# script wins ("FULLWIDTH LATIN ..." is Latin, "HALFWIDTH KATAKANA ..." Katakana).
_SCRIPT_BY_NAME_WORD = {
    "LATIN": "Latn", "CYRILLIC": "Cyrl", "GREEK": "Grek", "ARMENIAN": "Armn", "GEORGIAN": "Geor",
    "HEBREW": "Hebr", "ARABIC": "Arab", "SYRIAC": "Syrc", "THAANA": "Thaa", "DEVANAGARI": "Deva",
    "BENGALI": "Beng", "GURMUKHI": "Guru", "GUJARATI": "Gujr", "ORIYA": "Orya", "TAMIL": "Taml",
    "TELUGU": "Telu", "KANNADA": "Knda", "MALAYALAM": "Mlym", "SINHALA": "Sinh", "THAI": "Thai",
    "LAO": "Laoo", "TIBETAN": "Tibt", "MYANMAR": "Mymr", "KHMER": "Khmr", "ETHIOPIC": "Ethi",
    "HANGUL": "Hang", "HIRAGANA": "Hira", "KATAKANA": "Kana", "CJK": "Hani", "MONGOLIAN": "Mong",
    "CHEROKEE": "Cher", "TIFINAGH": "Tfng", "NKO": "Nkoo", "OL": "Olck",
}


# Composite ISO 15924 codes a registry may list, and the Unicode scripts they cover.
_COMPOSITE_SCRIPTS = {
    "Jpan": ("Hani", "Hira", "Kana"), "Kore": ("Hang", "Hani"), "Hrkt": ("Hira", "Kana"),
    "Hans": ("Hani",), "Hant": ("Hani",),
}


def script_of(char: str) -> str:
    """ISO 15924 script of a letter; `Zyyy` (Common) for anything that is not a letter."""
    if not unicodedata.category(char).startswith("L"):
        return "Zyyy"
    for word in unicodedata.name(char, "").split()[:2]:
        if word in _SCRIPT_BY_NAME_WORD:
            return _SCRIPT_BY_NAME_WORD[word]
    return "Zzzz"


def _local_script_share(text: str, expected: Sequence[str]) -> float:
    wanted = {script for code in expected for script in _COMPOSITE_SCRIPTS.get(code, (code,))}
    letters = [script for script in map(script_of, text) if script != "Zyyy"]
    if not letters:
        return math.nan
    return sum(script in wanted for script in letters) / len(letters)


@functools.lru_cache(maxsize=1)
def _core_expected_script_share():
    try:
        from builders.core.scripts import expected_script_share
    except ImportError:
        return None
    return expected_script_share


def script_share(text: str, expected: Sequence[str]) -> float:
    """Share of the letters of `text` written in one of the `expected` scripts.

    Digits, punctuation and spaces are script-neutral and not counted; NaN when the text
    has no letter at all (nothing to judge). The project's `builders.core.scripts`
    (written on another branch) is used when present; until then the name-based
    `script_of` above stands in. This function is the only place that chooses.
    """
    core = _core_expected_script_share()
    if core is None:
        return _local_script_share(text, expected)
    share = core(text, tuple(expected))
    return math.nan if share is None else float(share)


@functools.lru_cache(maxsize=1)
def _full_langid():
    from langid.langid import LanguageIdentifier as _Identifier, model

    return _Identifier.from_modelstring(model, norm_probs=True)


class LanguageIdentifier:
    """langid.py restricted to the languages in play, with probabilities normalised over them.

    `candidates` maps a registry key to its langid code; keys without a langid code cannot
    be recognised and are left out (their hypotheses get NaN, i.e. "not checked").
    """

    def __init__(self, candidates: Mapping[str, str | None]):
        self._key_of = {code: key for key, code in sorted(candidates.items()) if code}
        if not self._key_of:
            raise ValueError("no language in play has a langid code")
        # set_languages replaces (never mutates) the model arrays, so a shallow copy of
        # the decoded model (seconds to decode) serves each language set.
        self._identifier = copy.copy(_full_langid())
        self._identifier.set_languages(sorted(self._key_of))

    def probabilities(self, text: str) -> dict[str, float]:
        """Registry key -> probability, over the languages in play (summing to 1)."""
        return {self._key_of[code]: float(prob) for code, prob in self._identifier.rank(text)}

    def check(self, text: str, expected: str) -> tuple[str, float]:
        """(most likely language key, probability of the `expected` language)."""
        probabilities = self.probabilities(text)
        best = max(sorted(probabilities), key=probabilities.__getitem__)
        return best, probabilities.get(expected, math.nan)


# Words for space-delimited scripts; single characters for Han and kana, which are
# written without spaces, so a looping "猫猫猫猫" is seen as four repeated units.
_UNIT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_EDGE_PUNCTUATION = re.compile(r"^\W+|\W+$")


def units(text: str) -> list[str]:
    """Case-folded words (Han/kana: characters) with edge punctuation stripped."""
    found = (_EDGE_PUNCTUATION.sub("", unit.casefold()) for unit in _UNIT.findall(text))
    return [unit for unit in found if unit]


def copy_overlap(hypothesis: str, source: str) -> float:
    """Share of the hypothesis' units that also occur in the source.

    1.0 for a hypothesis that copies the source, near 0 for a real translation into
    another language (names and numbers aside). NaN for an empty hypothesis.
    """
    hyp_units = units(hypothesis)
    if not hyp_units:
        return math.nan
    source_units = set(units(source))
    return sum(unit in source_units for unit in hyp_units) / len(hyp_units)


def is_copy(hypothesis: str, source: str) -> bool:
    """The hypothesis is the source up to case, spacing and punctuation."""
    return bool(units(hypothesis)) and units(hypothesis) == units(source)


def _longest_run(seq: Sequence[str], max_n: int) -> int:
    """Most consecutive repetitions of one n-gram (n <= max_n) of the sequence."""
    best = 1 if seq else 0
    for n in range(1, max_n + 1):
        for start in range(n):
            run = 1
            # Compare consecutive n-grams aligned at `start`, `start + n`, ...
            for i in range(start + n, len(seq) - n + 1, n):
                if seq[i:i + n] == seq[i - n:i]:
                    run += 1
                    best = max(best, run)
                else:
                    run = 1
    return best


def longest_repeat_run(text: str, max_n: int = 4) -> int:
    """Most consecutive repetitions of one n-gram of units (words; Han/kana characters).

    1 for text without an immediate repetition; a decoder loop such as
    "a dog a dog a dog a dog" gives 4 (the bigram "a dog" four times in a row).
    """
    return _longest_run(units(text), max_n)


def longest_letter_run(text: str, max_n: int = 4) -> int:
    """The same over the letters alone (spaces and punctuation dropped).

    Catches loops inside one "word" that the word view misses: scripts written without
    spaces (Thai, Khmer, ...) or a model repeating a syllable ("ỡỡỡỡ", "lalalala").
    """
    return _longest_run([char for char in text.casefold() if char.isalpha()], max_n)
