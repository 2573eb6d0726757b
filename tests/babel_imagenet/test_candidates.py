"""Candidates: every sense of a class with the rule that set it aside, derived through labels.py's own rules."""

from babelforge.babel_imagenet.candidates import SET_ASIDE, candidate_rows
from babelforge.babel_imagenet.forms import english_lemma_keys
from babelforge.babel_imagenet.label_choice import english_rows
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.lexicon.senses import Sense

ENGLISH = english_lemma_keys([["tench", "Tinca tinca"], ["goldfish", "Carassius auratus"]])
WNIDS = {"01440764-n": (0, "n01440764"), "01443537-n": (1, "n01443537")}
RULES = Rules(low_precision_sources=frozenset({"WIKIRED"}))


def sense(lemma, rank, source="WIKI", mt=False, synset="01440764-n", lang="deu_Latn"):
    return Sense(synset, lang, lemma, source, mt, rank)


def rows_for(senses, extra_choices=()):
    choices = choose_labels(senses, ENGLISH, None, RULES) + list(extra_choices)
    return candidate_rows(senses, choices, WNIDS, ENGLISH, RULES)


def test_every_sense_is_listed_with_the_rule_that_set_it_aside():
    senses = [
        sense("Tench", 0),
        sense("Schlei", 1, source="WNTR", mt=True),
        sense("Schleiealias", 2, source="WIKIRED"),
        sense("Schleie", 3),
        sense("Grünschleie", 4),
        sense("__", 5),
        sense("GAP!", 6),
    ]
    rows = {row["label"]: row for row in rows_for(senses)}
    assert {label: row["set_aside"] for label, row in rows.items()} == {
        "Tench": "english",
        "Schlei": "machine_translated",
        "Schleiealias": "low_precision",
        "Schleie": "",
        "Grünschleie": "not_first",
        "__": "dropped_empty",
        "GAP!": "dropped_placeholder",
    }
    assert rows["Schleie"]["chosen"] and sum(row["chosen"] for row in rows.values()) == 1
    assert all(row["set_aside"] in SET_ASIDE for row in rows.values())
    assert {(row["class_idx"], row["wnid"]) for row in rows.values()} == {(0, "n01440764")}


def test_a_low_precision_sense_chosen_when_alone_leaves_later_ones_not_first():
    rows = rows_for([sense("tench", 0), sense("Alias", 1, source="WIKIRED"), sense("Alias2", 2, source="WIKIRED")])
    assert [(row["label"], row["set_aside"]) for row in rows] == [
        ("tench", "english"),
        ("Alias", ""),
        ("Alias2", "not_first"),
    ]


def test_agreement_counts_distinct_sources_of_the_same_lemma():
    senses = [
        sense("Schleie", 0, source="omw:odenet"),
        sense("schleie", 1, source="wikt"),
        sense("Schleie", 2, source="wikt"),
        sense("Grünschleie", 3, source="wikt"),
    ]
    rows = rows_for(senses)
    assert [(row["agreement"], row["set_aside"]) for row in rows] == [
        (2, ""),
        (2, "same_label"),
        (2, "same_label"),
        (1, "not_first"),
    ]


def test_a_class_whose_senses_were_all_dropped_still_lists_them():
    rows = rows_for([sense("goldfish", 0, synset="01443537-n")])
    assert [(row["class_idx"], row["set_aside"], row["chosen"]) for row in rows] == [(1, "english", False)]


def test_english_lists_the_clip_name_as_chosen_and_other_lemmas_as_set_aside():
    senses = [
        sense("tench", 0, source="wikt", lang="eng_Latn"),
        sense("Tinca tinca", 1, source="wikt", lang="eng_Latn"),
    ]
    choices = english_rows({"01440764-n": "tench"})
    rows = candidate_rows(senses, choices, WNIDS, ENGLISH, RULES)
    assert [(row["label"], row["source"], row["set_aside"], row["agreement"]) for row in rows] == [
        ("tench", "clip", "", 2),
        ("tench", "wikt", "clip_name", 2),
        ("Tinca tinca", "wikt", "clip_name", 1),
    ]


def test_languages_without_a_choice_are_left_out():
    senses = [sense("Schleie", 0), sense("tanche", 0, lang="fra_Latn")]
    choices = [c for c in choose_labels(senses, ENGLISH, None, RULES) if c.lang == "deu_Latn"]
    assert {row["lang"] for row in candidate_rows(senses, choices, WNIDS, ENGLISH, RULES)} == {"deu_Latn"}
