"""Candidates: every sense of a class with the rule that set it aside, derived through labels.py's own rules."""

from babelforge.babel_imagenet.candidates import SET_ASIDE, candidate_rows
from babelforge.babel_imagenet.forms import english_lemma_keys
from babelforge.babel_imagenet.label_choice import PRECISION_FLOOR, drop_label, english_rows
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.core.languages import registry
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
    assert [(row["label"], row["source"], row["rank"], row["set_aside"], row["agreement"]) for row in rows] == [
        ("tench", "clip", 0, "", 2),
        ("tench", "wikt", 0, "clip_name", 2),
        ("Tinca tinca", "wikt", 1, "clip_name", 1),
    ]


def test_languages_without_a_choice_are_left_out():
    senses = [sense("Schleie", 0), sense("tanche", 0, lang="fra_Latn")]
    choices = [c for c in choose_labels(senses, ENGLISH, None, RULES) if c.lang == "deu_Latn"]
    assert {row["lang"] for row in candidate_rows(senses, choices, WNIDS, ENGLISH, RULES)} == {"deu_Latn"}


# --- routing, script spans, purity, duplicates and the floor: each through the labels stage's own rules ---

TENCH, GOLDFISH = "01440764-n", "01443537-n"
ROUTES = {"hbs_Latn": {"Cyrl": "srp_Cyrl"}}  # params.yaml's labels.script_routes


def routed_rows(senses, rules=RULES, routes=ROUTES, class_names=None):
    router = ScriptRouter(registry(), routes)
    choices = choose_labels(senses, ENGLISH, router, rules, class_names=class_names)
    return candidate_rows(senses, choices, WNIDS, ENGLISH, rules, router, class_names)


def test_a_form_in_another_script_is_listed_under_the_key_it_was_routed_to_or_as_set_aside():
    senses = [
        sense("linjak", 0, source="wikt", lang="hbs_Latn"),
        sense("лињак", 1, source="wikt", lang="hbs_Latn"),  # Serbian Cyrillic: srp_Cyrl's label
        sense("Schleie", 0, source="wikt"),
        sense("Σλάιε", 1, source="wikt"),  # Greek script: no German key writes it
        sense("tench", 0, source="wikt", lang="eng_Latn"),  # English is never routed, nor listed without a choice
    ]
    assert [(row["lang"], row["label"], row["set_aside"]) for row in routed_rows(senses)] == [
        ("deu_Latn", "Schleie", ""),
        ("deu_Latn", "Σλάιε", "script"),
        ("hbs_Latn", "linjak", ""),
        ("srp_Cyrl", "лињак", ""),
    ]


def test_a_foreign_script_span_is_stripped_only_with_the_rule_on():
    tick, granny_smith = "01776313-n", "07742313-n"
    wnids = {tick: (78, "n01776313"), granny_smith: (948, "n07742313")}
    names = {granny_smith: ("Granny Smith",)}  # the span is the class's own name: the rest stands alone
    senses = [
        sense("οικογένεια ixodoide", 0, source="omw:ell", synset=tick, lang="ell_Grek"),
        sense("οικογένεια", 1, source="wikt", synset=tick, lang="ell_Grek"),  # the span only qualified it
        sense("μήλο Granny Smith", 0, source="omw:ell", synset=granny_smith, lang="ell_Grek"),
        sense("Granny Smith", 0, source="wikt", synset=granny_smith, lang="eng_Latn"),
    ]
    listed = {}
    for script_span in (True, False):
        rules = Rules(low_precision_sources=frozenset({"WIKIRED"}), script_span=script_span)
        router = ScriptRouter(registry(), ROUTES)
        choices = choose_labels(senses, ENGLISH, router, rules, class_names=names)
        choices += english_rows({granny_smith: "Granny Smith"})
        rows = candidate_rows(senses, choices, wnids, ENGLISH, rules, router, names)
        listed[script_span] = [(row["lang"], row["label"], row["raw"], row["set_aside"]) for row in rows]
    assert listed[True] == [
        ("ell_Grek", "οικογένεια", "οικογένεια ixodoide", ""),
        ("ell_Grek", "οικογένεια", "οικογένεια", "same_label"),
        ("ell_Grek", "μήλο", "μήλο Granny Smith", ""),
        ("eng_Latn", "Granny Smith", "Granny Smith", ""),
        ("eng_Latn", "Granny Smith", "Granny Smith", "clip_name"),
    ]
    # off: the mixed form is kept whole, and the one written mostly in Latin has no key in Greek
    assert listed[False] == [
        ("ell_Grek", "οικογένεια ixodoide", "οικογένεια ixodoide", ""),
        ("ell_Grek", "οικογένεια", "οικογένεια", "not_first"),
        *listed[True][3:],
    ]


def test_a_shared_wordnet_form_of_the_sibling_language_is_set_aside_as_other_language():
    # Wordnet Bahasa writes one line into the Indonesian and the Malay file; the lean says it is Malay
    senses = [
        sense("kasut", 0, source="omw:msa", lang="ind_Latn"),
        sense("sepatu", 1, source="omw:msa", lang="ind_Latn"),
        sense("kasut", 0, source="omw:msa", lang="zsm_Latn"),
    ]
    malay = {("ind_Latn", "zsm_Latn", "kasut"): 2.0}
    rules = Rules(low_precision_sources=frozenset({"WIKIRED"}), purity=lambda *key: malay.get(key))
    assert [(row["lang"], row["label"], row["set_aside"]) for row in routed_rows(senses, rules)] == [
        ("ind_Latn", "kasut", "other_language"),
        ("ind_Latn", "sepatu", ""),
        ("zsm_Latn", "kasut", ""),
    ]


def test_a_class_that_gave_its_first_label_to_another_lists_it_as_duplicate():
    # both classes rank `Fisch` first; the goldfish keeps it (two sources), the tench takes its next form
    senses = [
        sense("Fisch", 0, source="wikt"),
        sense("Schleie", 1, source="wikt"),
        sense("Grünschleie", 2, source="wikt"),
        sense("Fisch", 0, source="wikt", synset=GOLDFISH),
        sense("Fisch", 0, source="omw:odenet", synset=GOLDFISH),
    ]
    rules = Rules(low_precision_sources=frozenset({"WIKIRED"}), ranking="agreement", resolve_duplicates=True)
    choices = choose_labels(senses, ENGLISH, None, rules)
    rows = candidate_rows(senses, choices, WNIDS, ENGLISH, rules)
    assert [(row["class_idx"], row["label"], row["set_aside"]) for row in rows] == [
        (0, "Fisch", "duplicate"),
        (0, "Schleie", ""),
        (0, "Grünschleie", "not_first"),
        (1, "Fisch", "same_label"),  # omw:odenet sorts before wikt; wikt comes first in source_priority
        (1, "Fisch", ""),
    ]


def test_a_class_the_precision_floor_dropped_lists_every_form_as_dropped_by_it():
    senses = [sense("Schleie", 0), sense("Grünschleie", 1), sense("Schlei", 2, source="WNTR", mt=True)]
    choices = [drop_label(c, PRECISION_FLOOR) for c in choose_labels(senses, ENGLISH, None, RULES)]
    rows = candidate_rows(senses, choices, WNIDS, ENGLISH, RULES)
    assert [(row["label"], row["set_aside"], row["chosen"]) for row in rows] == [
        ("Schleie", PRECISION_FLOOR, False),
        ("Grünschleie", PRECISION_FLOOR, False),
        ("Schlei", "machine_translated", False),
    ]


def test_forms_are_listed_by_rank_then_position_in_their_lemma_then_source():
    # two sources' first lemmas each name two forms; a lemma cleaning dropped sorts as its own first form
    senses = [
        sense("Schleie, Schlei", 0, source="wikt"),
        sense("Schleie; Grünschleie", 0, source="omw:odenet"),
        sense("GAP!", 0, source="cldr"),
    ]
    assert [(row["label"], row["source"], row["set_aside"]) for row in rows_for(senses)] == [
        ("GAP!", "cldr", "dropped_placeholder"),
        ("Schleie", "omw:odenet", "same_label"),
        ("Schleie", "wikt", ""),
        ("Grünschleie", "omw:odenet", "not_first"),
        ("Schlei", "wikt", "not_first"),
    ]


def test_a_chosen_label_no_sense_gives_is_its_own_candidate_with_the_choice_provenance():
    # a choice made on an earlier senses snapshot whose wikt lemma `Schleie (Fisch)` is gone now
    earlier = [sense("Schleie (Fisch)", 3, source="wikt")]
    choices = choose_labels(earlier, ENGLISH, None, RULES)
    now = [sense("schleie", 0, source="wikt"), sense("Grünschleie", 1, source="wikt")]
    rows = candidate_rows(now, choices, WNIDS, ENGLISH, RULES)
    assert [(r["label"], r["raw"], r["source"], r["rank"], r["set_aside"], r["agreement"]) for r in rows] == [
        ("Schleie", "Schleie (Fisch)", "wikt", 3, "", 1),
        ("schleie", "schleie", "wikt", 0, "same_label", 1),
        ("Grünschleie", "Grünschleie", "wikt", 1, "not_first", 1),
    ]
