import pytest

from builders.babel_imagenet.labels import (
    LabelChoice, choose_label, choose_labels, english_lemma_keys, english_rows, kept_languages,
    normalise_lemma, resource_group,
)
from builders.lexicon.senses import Sense

ENGLISH = english_lemma_keys([["tench", "Tinca tinca"], ["goldfish", "Carassius auratus"], ["jeep", "landrover"]])


def sense(lemma, rank, source="WIKI", mt=False, synset="01440764-n", lang="deu_Latn"):
    return Sense(synset, lang, lemma, source, mt, rank)


def test_normalise_underscores_nfc_and_spaces():
    assert normalise_lemma("  Weißer_Hai ") == "Weißer Hai"
    assert normalise_lemma("Cafe\u0301  au_lait") == "Café au lait"  # combining accent composed


def test_first_sense_in_source_order_wins():
    choice = choose_label([sense("Zweite", 1), sense("Schleie", 0)], ENGLISH)
    assert (choice.label, choice.rank, choice.source) == ("Schleie", 0, "WIKI")


def test_drops_lemma_equal_to_english_lemma_of_any_class_casefolded():
    # "Goldfish" is an English lemma of another class: not a German label for this one either
    choice = choose_label([sense("GOLDFISH", 0), sense("tinca_tinca", 1), sense("Schleie", 2)], ENGLISH)
    assert choice.label == "Schleie"
    assert choice.n_dropped_english == 2


def test_drops_machine_translated_senses():
    choice = choose_label([sense("Schlei", 0, source="WNTR", mt=True), sense("Schleie", 1)], ENGLISH)
    assert choice.label == "Schleie" and choice.n_dropped_mt == 1


def test_english_and_translated_counts_as_english():
    choice = choose_label([sense("Jeep", 0, mt=True), sense("Geländewagen", 1)], ENGLISH)
    assert (choice.n_dropped_english, choice.n_dropped_mt) == (1, 0)


def test_low_precision_sources_only_when_nothing_else():
    preferred = choose_label([sense("Alias", 0, source="WIKIRED"), sense("Schleie", 1)], ENGLISH)
    assert preferred.label == "Schleie" and preferred.n_dropped_low_precision == 1
    fallback = choose_label([sense("tench", 0), sense("Alias", 1, source="WIKIDATA_ALIAS")], ENGLISH)
    assert fallback.label == "Alias" and fallback.used_low_precision and fallback.n_dropped_low_precision == 0


def test_class_without_remaining_sense_has_no_label():
    choice = choose_label([sense("tench", 0), sense("Schlei", 1, mt=True)], ENGLISH)
    assert choice.label is None and choice.source is None


def test_choose_labels_groups_per_language_and_skips_english():
    senses = [
        sense("Schleie", 0), sense("tanche", 0, lang="fra_Latn"), sense("tench", 0, lang="eng_Latn"),
        sense("Goldfisch", 0, synset="01443537-n"),
    ]
    choices = choose_labels(senses, ENGLISH)
    assert [(c.lang, c.synset, c.label) for c in choices] == [
        ("deu_Latn", "01440764-n", "Schleie"), ("deu_Latn", "01443537-n", "Goldfisch"),
        ("fra_Latn", "01440764-n", "tanche"),
    ]


def test_min_classes_threshold():
    choices = [choose_label([sense(f"w{i}", 0, synset=f"{i:08d}-n")], ENGLISH) for i in range(10)]
    choices += [choose_label([sense(f"m{i}", 0, synset=f"{i:08d}-n", lang="fra_Latn")], ENGLISH) for i in range(9)]
    assert kept_languages(choices, 10) == {"deu_Latn": 10}


@pytest.mark.parametrize("n, group", [(10, "very-low"), (100, "very-low"), (101, "low"), (333, "low"),
                                      (334, "mid"), (666, "mid"), (667, "high"), (1000, "high")])
def test_resource_group_bounds(n, group):
    assert resource_group(n) == group


def test_duplicates_are_flagged_not_dropped():
    import pandas as pd

    from builders.babel_imagenet.labels_stage import labels_frame

    classes = pd.DataFrame({"class_idx": range(5), "wnid": [f"n{i}" for i in range(5)],
                            "synset": [f"{i:08d}-n" for i in range(5)]})
    labels = [("deu_Latn", "Kran"), ("deu_Latn", "kran"), ("deu_Latn", "Hai"), ("deu_Latn", "Schleie"),
              ("fin_Latn", "hai")]
    choices = [LabelChoice(f"{i:08d}-n", lang, label, "wikt", 0, 1, 0, 0, 0, False)
               for i, (lang, label) in enumerate(labels)]
    frame = labels_frame(choices, classes)
    # the duplicate tagger the audit counts with: within a language, NFC + strip + casefold
    assert frame["is_duplicate"].tolist() == [True, True, False, False, False]


def test_english_rows_are_clip_names():
    rows = english_rows({"01443537-n": "goldfish", "01440764-n": "tench"})
    assert [(r.synset, r.label, r.source) for r in rows] == [("01440764-n", "tench", "clip"), ("01443537-n", "goldfish", "clip")]
