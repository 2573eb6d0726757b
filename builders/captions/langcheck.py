"""Cheap checks on one translation hypothesis: language, copy, repetition (the script share is
the shared `script_v1` tagger of `babelforge.core.text_taggers`).

Each check is a pure function of plain strings; the tag stage runs them over every
hypothesis and stores the numbers, and selection thresholds them later.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping, Sequence

from babelforge.core.langid import identifier


class LanguageIdentifier:
    """langid.py restricted to the languages in play, with probabilities normalised over them.

    `candidates` maps a registry key to its langid code; keys without a langid code cannot
    be recognised and are left out (their hypotheses get NaN, i.e. "not checked"). Keys that
    share a code (`zho_Hans` / `zho_Hant` are both `zh`) share its probability: langid cannot
    tell them apart, the script check does.
    """

    def __init__(self, candidates: Mapping[str, str | None]):
        self._code_of = {key: code for key, code in sorted(candidates.items()) if code}
        if not self._code_of:
            raise ValueError("no language in play has a langid code")
        # set_languages replaces (never mutates) the model arrays, so a shallow copy of
        # the decoded model (seconds to decode) serves each language set.

        self._identifier = copy.copy(identifier())
        self._identifier.set_languages(sorted(set(self._code_of.values())))

    def probabilities(self, text: str) -> dict[str, float]:
        """Registry key -> probability of its langid code (normalised: the codes in play sum to 1)."""
        by_code = {code: float(prob) for code, prob in self._identifier.rank(text)}
        return {key: by_code[code] for key, code in self._code_of.items()}

    def check(self, text: str, expected: str) -> tuple[str, float]:
        """(most likely language key, probability of the `expected` language).

        Among keys sharing the most likely code, `expected` is named when it is one of them.
        """
        probabilities = self.probabilities(text)
        top = max(probabilities.values())
        best = (
            expected
            if probabilities.get(expected) == top
            else min(key for key, prob in probabilities.items() if prob == top)
        )
        return best, probabilities.get(expected, math.nan)


# Words for space-delimited scripts; single characters for Han and kana, which are
# written without spaces, so a looping "猫猫猫猫" is seen as four repeated units.
_UNIT = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\s\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
)
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
                if seq[i : i + n] == seq[i - n : i]:
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
