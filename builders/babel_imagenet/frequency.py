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


def frequency_lookup(languages: Iterable[Language]) -> Callable[[str, str], float | None]:
    """(registry key, label) -> Zipf frequency, or None for a language wordfreq does not cover.
    Memoised: every (language, label) is looked up once per build, however often it is asked."""
    import wordfreq

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
