"""Word frequency as evidence for a label: how common a candidate is in its language.

The resource is `wordfreq` (pip, its data ships in the wheel, so a build needs no network):
Zipf frequencies (log10 of uses per billion words; 3 is about one use in a million words, 0 no
recorded use) from Wikipedia, subtitles, news, books and the web, for about 40 languages. It is
maintained, offline and versioned, which is why it was chosen over raw corpus counts (not
shipped as a package) or Wiktionary frequency lists (a dozen languages). Its version is part of
the labels' provenance. Chinese and Japanese need its `cjk` extra (jieba, MeCab), installed.

A language wordfreq does not cover gets `None`, and so does a label of several words (wordfreq
would estimate it from its words): the frequency rule is off there, never a guess.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable
from importlib.metadata import version

from babelforge.core.languages import Language

# Registry keys whose wordfreq code is not their ISO 639-1 code (or that have none).
WORDFREQ_CODES = {"tgl_Latn": "fil", "nob_Latn": "nb"}
# A covered language's lookups in the scripts wordfreq's data is in: a form in another script
# (Serbian Cyrillic against `sh`'s Latin data) would read as unused.
SCRIPT_LIMITS = {"sh": ("Latn",), "zh": ("Hans", "Hant"), "ja": ("Jpan",)}


def wordfreq_code(language: Language, available: frozenset[str]) -> str | None:
    """The wordfreq language of a registry language, or None when wordfreq does not cover it."""
    code = WORDFREQ_CODES.get(language.key) or language.iso639_1
    if code not in available:
        return None
    if code in SCRIPT_LIMITS and language.script not in SCRIPT_LIMITS[code]:
        return None
    return code


@functools.cache
def bucketwise_frequency_dict(lang: str, wordlist: str = "best", match_cutoff: None = None) -> dict[str, float]:
    """wordfreq's `get_frequency_dict`, the same dict (the same words in the same order, the same
    values), built a frequency bucket at a time instead of word by word: the labels stage loads
    42 languages' lists, 4.1 s with wordfreq's loop and 2.1 s with this one."""
    import wordfreq

    freqs: dict[str, float] = {}
    for index, bucket in enumerate(wordfreq.get_frequency_list(lang, wordlist)):
        freqs.update(dict.fromkeys(bucket, wordfreq.cB_to_freq(-index)))
    return freqs


def use_bucketwise_frequency_dict() -> None:
    """Have wordfreq's lookups read `bucketwise_frequency_dict` (its functions find the dict
    through the module's global; wordfreq's own stays as `.replaces`, for the test)."""
    import wordfreq

    if wordfreq.get_frequency_dict is not bucketwise_frequency_dict:
        bucketwise_frequency_dict.replaces = wordfreq.get_frequency_dict
        wordfreq.get_frequency_dict = bucketwise_frequency_dict


def frequency_lookup(languages: Iterable[Language]) -> Callable[[str, str], float | None]:
    """(registry key, label) -> Zipf frequency, or None for a language wordfreq does not cover.
    Memoised: every (language, label) is looked up once per build, however often it is asked."""
    import wordfreq

    use_bucketwise_frequency_dict()
    logging.getLogger("jieba").setLevel(logging.WARNING)  # its dictionary-loading chatter, once per process
    available = frozenset(wordfreq.available_languages())
    codes = {language.key: wordfreq_code(language, available) for language in languages}

    @functools.cache
    def zipf(lang: str, label: str) -> float | None:
        code = codes.get(lang)
        if code is None or len(wordfreq.tokenize(label, code)) != 1:
            # A phrase's figure is wordfreq's estimate from its words' own frequencies: a made-up
            # phrase of common words (火無菊, "prise d'air") would outrank the real name. No evidence.
            return None
        return float(wordfreq.zipf_frequency(label, code))

    return zipf


def wordfreq_version() -> str:
    return version("wordfreq")


def list_floor(code: str) -> float:
    """The lowest Zipf frequency wordfreq lists for a language: its word list stops there, so a 0
    means "rarer than this", not "never used" (3.0 for the small lists such as Indonesian's and
    Malay's, where `trompet` reads 0, about 1.0 for the large ones)."""
    import wordfreq

    buckets = wordfreq.get_frequency_list(code)
    last = max(index for index, words in enumerate(buckets) if words)
    return 9.0 - last / 100  # buckets are centibels below one use per word, Zipf 9


def language_lean(languages: Iterable[Language]) -> Callable[[str, str, str], float | None]:
    """(registry key, other key, label) -> how many Zipf units more common the label is in the
    other language at least: the largest such lower bound over its words (`kasut kayu` leans to
    Malay by `kasut`). A word missing from a list counts as that list's floor in the language it
    is weighed for, and as no evidence in the other one, so a gap in a small list (Indonesian
    `trompet`) never makes a word foreign. None when wordfreq lacks either language, or no word
    of the label gives a bound."""
    import wordfreq

    use_bucketwise_frequency_dict()
    available = frozenset(wordfreq.available_languages())
    codes = {language.key: wordfreq_code(language, available) for language in languages}
    floors: dict[str, float] = {}

    def floor(code: str) -> float:
        if code not in floors:
            floors[code] = list_floor(code)
        return floors[code]

    @functools.cache
    def lean(lang: str, other: str, label: str) -> float | None:
        code, other_code = codes.get(lang), codes.get(other)
        if code is None or other_code is None:
            return None
        bounds = []
        for word in wordfreq.tokenize(label, code):
            here, there = wordfreq.zipf_frequency(word, code), wordfreq.zipf_frequency(word, other_code)
            if there > 0:
                bounds.append(there - (here if here > 0 else floor(code)))
        return max(bounds, default=None)

    return lean


def covered_languages(languages: Iterable[Language]) -> frozenset[str]:
    """The registry keys wordfreq has a list for."""
    import wordfreq

    available = frozenset(wordfreq.available_languages())
    return frozenset(language.key for language in languages if wordfreq_code(language, available))
