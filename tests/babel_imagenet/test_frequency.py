"""The frequency rule: word frequency (wordfreq) as evidence among equally supported candidates."""

import pytest

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.frequency import (
    bucketwise_frequency_dict,
    frequency_lookup,
    use_bucketwise_frequency_dict,
    wordfreq_code,
)
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.ranking import FREQUENCY_MARGIN, frequency_keys, rank_candidates
from babelforge.core.languages import registry
from babelforge.lexicon.senses import Sense

from .test_labels import ENGLISH


def form(label, rank, source, lang="deu_Latn", synset="02084071-n"):
    return Form(synset, lang, label, label, source, False, rank, 0, None)


def zipf_of(table):
    return lambda label: table.get(label)


def test_frequency_keys_demote_no_recorded_use_and_the_tenfold_rarer():
    assert frequency_keys([3.0, 0.0, None]) == [(False, False), (True, False), (False, False)]
    assert frequency_keys([3.0, 3.0 - FREQUENCY_MARGIN, 2.5]) == [(False, False), (False, True), (False, False)]
    assert frequency_keys([0.0, 0.0]) == [(False, False), (False, False)]  # no use anywhere: no evidence
    assert frequency_keys([None, None]) == [(False, False), (False, False)]


@pytest.mark.parametrize(
    "zipfs, winner, reason",
    [
        ({"Schafbock": 1.9, "Widder": 3.3}, "Widder", "frequency"),  # tenfold more common
        ({"Schafbock": 2.9, "Widder": 3.3}, "Schafbock", "source_priority"),  # within the margin: sources decide
        ({"Schafbock": 0.0, "Widder": 1.0}, "Widder", "frequency_unused"),  # no recorded use
        ({}, "Schafbock", "source_priority"),  # a language wordfreq does not cover
    ],
)
def test_among_equally_supported_candidates_the_common_word_wins(zipfs, winner, reason):
    from babelforge.babel_imagenet.ranking import rank_reason

    forms = [form("Schafbock", 0, "wikt"), form("Widder", 0, "omw:deu")]
    ranked = rank_candidates(forms, "agreement", ("wikt", "omw"), zipf=zipf_of(zipfs))
    assert (ranked[0].label, rank_reason(ranked, "agreement")) == (winner, reason)


def test_more_sources_still_beat_a_commoner_word_and_first_ignores_frequency():
    forms = [form("Schafbock", 0, "wikt"), form("Schafbock", 1, "omw:deu"), form("Widder", 0, "cldr")]
    zipf = zipf_of({"Schafbock": 0.0, "Widder": 5.0})
    assert rank_candidates(forms, "agreement", ("wikt", "omw", "cldr"), zipf=zipf)[0].label == "Schafbock"
    assert rank_candidates(forms[::-1], "first", zipf=zipf)[0].label == "Widder"  # rank 0 of its source, first listed


def test_the_real_resource_covers_about_forty_languages_single_words_only():
    lookup = frequency_lookup(registry())
    assert lookup("deu_Latn", "Widder") > lookup("deu_Latn", "Schafbock") + FREQUENCY_MARGIN
    assert lookup("zho_Hans", "牛") > 4 and lookup("zho_Hans", "犉") == 0.0  # jieba (the cjk extra) is installed
    assert lookup("ind_Latn", "sandal") > 0 and lookup("ind_Latn", "selipar") == 0.0  # Malay, not Indonesian
    assert lookup("fra_Latn", "prise d'air") is None  # a phrase: no evidence
    assert lookup("swh_Latn", "mbwa") is None  # Swahili: not covered
    import wordfreq

    available = frozenset(wordfreq.available_languages())
    covered = [language.key for language in registry() if wordfreq_code(language, available)]
    assert 38 <= len(covered) <= 45 and "nob_Latn" in covered and "srp_Cyrl" not in covered


def test_the_rule_switches_off():
    senses = [
        Sense("02084071-n", "deu_Latn", "Schafbock", "wikt", False, 0),
        Sense("02084071-n", "deu_Latn", "Widder", "omw:deu", False, 0),
    ]
    on = Rules(
        ranking="agreement",
        source_priority=("wikt", "omw"),
        frequency=lambda lang, label: {"Widder": 3.3, "Schafbock": 1.9}[label],
    )
    off = Rules(ranking="agreement", source_priority=("wikt", "omw"))
    assert [c.label for c in choose_labels(senses, ENGLISH, rules=on)] == ["Widder"]
    assert [c.label for c in choose_labels(senses, ENGLISH, rules=off)] == ["Schafbock"]


@pytest.mark.parametrize("code", ["en", "de", "id", "zh", "ja", "ar"])
def test_the_bucketwise_dict_is_wordfreqs_own(code):
    """The same words in the same order with the same values as wordfreq's word-by-word build,
    for a large list, a small one and the CJK ones; and wordfreq's lookups read it."""
    import wordfreq

    use_bucketwise_frequency_dict()
    assert wordfreq.get_frequency_dict is bucketwise_frequency_dict
    own = bucketwise_frequency_dict.replaces(code)
    assert list(bucketwise_frequency_dict(code).items()) == list(own.items())
