"""Latin look-alike letters inside Cyrillic and Greek words (builders/babel_imagenet/confusables.py)."""

import unicodedata
from collections import Counter

from babelforge.babel_imagenet.confusables import known_words, lookalikes, repair, repair_forms, word_script
from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.purity import MIXED_SCRIPT


def test_table_pairs_latin_letters_with_look_alikes_of_the_script():
    table = lookalikes()
    assert table[("j", "Cyrl")] == ("ј",)
    assert "у" in table[("y", "Cyrl")] and "ү" in table[("y", "Cyrl")]  # several: the known word decides
    assert table[("ç", "Cyrl")] == ("ҫ",) and table[("æ", "Cyrl")] == ("ӕ",)
    assert table[("o", "Grek")][0] == "ο"
    for (latin, script), natives in table.items():  # every pair is what its name says
        assert unicodedata.name(latin).startswith("LATIN ")
        prefix = {"Cyrl": "CYRILLIC ", "Grek": "GREEK "}[script]
        assert all(unicodedata.name(native).startswith(prefix) for native in natives)


def test_word_script_finds_mixed_cyrillic_and_greek_words():
    assert word_script("ноj") == "Cyrl"
    assert word_script("çытар") == "Cyrl"
    assert word_script("σoφία") == "Grek"
    assert word_script("ној") is None and word_script("noj") is None
    assert word_script("ξon") is None  # a Latin word with a Greek letter


def test_repair_only_to_a_known_word():
    known = known_words(["ној", "јазавац"])
    assert repair("ноj", known) == ("ној", 1, 0)
    assert repair("дивљa свиња", known_words(["дивља"])) == ("дивља свиња", 1, 0)
    assert repair("креjа", known) == ("креjа", 0, 1)  # `креја` is not a known word: left, counted as mixed
    assert repair("сова", known) == ("сова", 0, 0)


def test_known_words_take_recorded_use():
    known = known_words([], frequency=lambda word: 3.2 if word == "сојка" else 0.0)
    assert repair("сoјка", known) == ("сојка", 1, 0)


def _form(lang, label):
    return Form("jay.n.01", lang, label, label, "wikt", False, 0)


def test_repair_forms_repairs_flags_and_counts():
    forms = [
        _form("srp_Cyrl", "ној"),
        _form("srp_Cyrl", "ноj"),
        _form("srp_Cyrl", "креjа"),
        _form("deu_Latn", "Eichelhäher"),
    ]
    tally = Counter()
    repaired = repair_forms(forms, None, tally)
    assert repaired[1].label == "ној" and repaired[1].cleaned == ("confusable",) and not repaired[1].flag
    assert repaired[2].label == "креjа" and repaired[2].flag == MIXED_SCRIPT
    assert repaired[0] == forms[0] and repaired[3] == forms[3]
    assert tally == {("srp_Cyrl", "n_cleaned_confusable"): 1, ("srp_Cyrl", "n_mixed_script"): 1}
