"""The label rules on hand-made senses, one rule at a time."""

from collections import Counter

import pytest

from babelforge.babel_imagenet.duplicate_labels import resolve_duplicates
from babelforge.babel_imagenet.forms import Form, english_lemma_keys
from babelforge.babel_imagenet.label_choice import LabelChoice, choose_label, english_rows
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.language_fates import kept_languages
from babelforge.babel_imagenet.ranking import ClassEvidence, is_scientific_name, rank_candidates
from babelforge.babel_imagenet.resource_groups import resource_group
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.babel_imagenet.trust import priority_index
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import read_registry
from babelforge.lexicon.senses import Sense
from tests.registry import write_registry

ENGLISH = english_lemma_keys([["tench", "Tinca tinca"], ["goldfish", "Carassius auratus"], ["jeep", "landrover"]])
CANIS = ("genus:Canis", "family:Canidae", "order:Carnivora")


def sense(lemma, rank, source="WIKI", mt=False, synset="01440764-n", lang="deu_Latn"):
    return Sense(synset, lang, lemma, source, mt, rank)


def form(label, rank, source="WIKI", mt=False, synset="01440764-n", lang="deu_Latn", part=0, routed_from=None):
    return Form(synset, lang, label, label, source, mt, rank, part, routed_from)


def test_first_sense_in_source_order_wins():
    choice = choose_label([form("Zweite", 1), form("Schleie", 0)], ENGLISH)
    assert (choice.label, choice.rank, choice.source, choice.rank_reason) == ("Schleie", 0, "WIKI", "first")


def test_drops_lemma_equal_to_english_lemma_of_any_class_casefolded():
    # "Goldfish" is an English lemma of another class: not a German label for this one either
    choices = choose_labels([sense("GOLDFISH", 0), sense("tinca_tinca", 1), sense("Schleie", 2)], ENGLISH)
    assert choices[0].label == "Schleie"
    assert choices[0].n_dropped_english == 2


def test_drops_machine_translated_senses():
    choice = choose_label([form("Schlei", 0, source="WNTR", mt=True), form("Schleie", 1)], ENGLISH)
    assert choice.label == "Schleie" and choice.n_dropped_mt == 1


def test_english_and_translated_counts_as_english():
    choice = choose_label([form("Jeep", 0, mt=True), form("Geländewagen", 1)], ENGLISH)
    assert (choice.n_dropped_english, choice.n_dropped_mt) == (1, 0)


def test_low_precision_sources_only_when_nothing_else():
    preferred = choose_label([form("Alias", 0, source="WIKIRED"), form("Schleie", 1)], ENGLISH)
    assert preferred.label == "Schleie" and preferred.n_dropped_low_precision == 1
    fallback = choose_label([form("tench", 0), form("Alias", 1, source="WIKIDATA_ALIAS")], ENGLISH)
    assert fallback.label == "Alias" and fallback.used_low_precision and fallback.n_dropped_low_precision == 0


def test_class_without_remaining_sense_has_no_label():
    choice = choose_label([form("tench", 0), form("Schlei", 1, mt=True)], ENGLISH)
    assert choice.label is None and choice.source is None and choice.rank_reason == ""


def test_choose_labels_groups_per_language_and_skips_english():
    senses = [
        sense("Schleie", 0),
        sense("tanche", 0, lang="fra_Latn"),
        sense("tench", 0, lang="eng_Latn"),
        sense("Goldfisch", 0, synset="01443537-n"),
    ]
    choices = choose_labels(senses, ENGLISH)
    assert [(c.lang, c.synset, c.label) for c in choices] == [
        ("deu_Latn", "01440764-n", "Schleie"),
        ("deu_Latn", "01443537-n", "Goldfisch"),
        ("fra_Latn", "01440764-n", "tanche"),
    ]


# --- cleaning inside the procedure -------------------------------------------------------------


def test_cleaned_forms_are_candidates_and_the_raw_lemma_is_kept():
    tally = Counter()
    choices = choose_labels(
        [
            sense("GAP!", 0, source="omw:ita", lang="ita_Latn"),
            sense("lynx (mammifère)|fr:lynx", 0, source="omw:fra", lang="fra_Latn", synset="02127052-n"),
            sense("[[wandelende]] [[tak]]", 0, source="omw:nld", lang="nld_Latn"),
        ],
        english_lemma_keys([["lynx", "catamount"]]),
        tally=tally,
    )
    # GAP! leaves nothing; "lynx" is clean but English; the Dutch links become a name
    assert [(c.lang, c.label, c.raw_lemma) for c in choices] == [
        ("fra_Latn", None, None),
        ("nld_Latn", "wandelende tak", "[[wandelende]] [[tak]]"),
    ]
    assert tally == Counter(
        {
            ("ita_Latn", "n_dropped_placeholder"): 1,
            ("fra_Latn", "n_cleaned_qualifier"): 1,
            ("fra_Latn", "n_cleaned_markup"): 1,
            ("nld_Latn", "n_cleaned_markup"): 1,
        }
    )
    assert choices[0].n_dropped_english == 1


def test_a_list_gives_one_candidate_per_name_in_its_order():
    choices = choose_labels([sense("borstje, salopette", 0, source="omw:nld", lang="nld_Latn")], ENGLISH)
    assert choices[0].label == "borstje"
    assert [c.label for c in choices[0].candidates] == ["borstje", "salopette"]


# --- script routing ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def languages(tmp_path_factory):
    rows = [
        {"key": "hbs_Latn", "scripts": "Latn,Cyrl"},
        {"key": "srp_Cyrl", "scripts": "Cyrl,Latn"},
        {"key": "kur_Latn"},
        {"key": "ckb_Arab"},
        {"key": "arb_Arab"},
        {"key": "arb_Latn"},
        {"key": "ell_Grek"},
        {"key": "oji_Cans", "scripts": "Cans,Latn"},
        {"key": "bul_Cyrl"},
        {"key": "zho_Hans", "scripts": "Hani"},
        {"key": "zho_Hant", "scripts": "Hani"},
        {"key": "deu_Latn"},
        {"key": "eng_Latn"},
        {"key": "eng_Latn-simple", "iso639_3": "eng"},
    ]
    return read_registry(write_registry(tmp_path_factory.mktemp("registry") / "languages.tsv", rows))


ROUTES = {"hbs_Latn": {"Cyrl": "srp_Cyrl"}, "kur_Latn": {"Arab": "ckb_Arab"}}


@pytest.mark.parametrize(
    "lang, text, target",
    [
        ("hbs_Latn", "zlatna ribica", "hbs_Latn"),
        ("hbs_Latn", "златна рибица", "srp_Cyrl"),  # a route of the params: Serbo-Croatian Cyrillic is Serbian's key
        ("kur_Latn", "هەنجیر", "ckb_Arab"),  # Arabic-script Kurdish is Sorani
        ("arb_Arab", "qahwa", "arb_Latn"),  # the registry has the same language in Latin script
        ("ell_Grek", "λύκος canis latrans", None),  # mostly Latin letters: not Greek, and no Greek-in-Latin key
        ("oji_Cans", "opichi", "oji_Cans"),  # no Latin Ojibwe key, and the registry expects Latin for it
        ("bul_Cyrl", "GSM", "bul_Cyrl"),  # a Latin acronym stays, as the audit allows
        ("zho_Hans", "T恤", "zho_Hans"),  # one Han, one Latin letter: Han (ties go alphabetically)
        ("zho_Hant", "美洲豹", "zho_Hant"),  # two keys write zho in Han: each keeps its own
        ("deu_Latn", "4711", "deu_Latn"),  # no letters, no script: nothing to route it by, it stays
    ],
)
def test_script_routing(languages, lang, text, target):
    assert ScriptRouter(languages, ROUTES).route(lang, text) == target


def test_routing_counts_and_ranks_routed_forms_after_native_ones(languages):
    tally = Counter()
    senses = [
        sense("ситно", 0, source="wikt", lang="hbs_Latn"),
        sense("ситница", 0, source="omw:srp", lang="srp_Cyrl"),
        sense("Carduelis carduelis", 0, source="omw:ell", lang="ell_Grek"),
    ]
    choices = choose_labels(senses, ENGLISH, ScriptRouter(languages, ROUTES), tally=tally)
    assert [(c.lang, c.label, c.routed_from) for c in choices] == [("srp_Cyrl", "ситница", None)]
    assert [(c.label, c.form.routed_from) for c in choices[0].candidates] == [("ситница", None), ("ситно", "hbs_Latn")]
    assert tally == Counter(
        {("hbs_Latn", "n_routed_out"): 1, ("srp_Cyrl", "n_routed_in"): 1, ("ell_Grek", "n_dropped_script"): 1}
    )


@pytest.mark.parametrize(
    "routes, message",
    [
        ({"hbs_Latn": {"Cyrl": "xxx_Cyrl"}}, "xxx_Cyrl is not a registry key"),
        ({"kur_Latn": {"Arab": "srp_Cyrl"}}, "labels.script_routes.kur_Latn.Arab: srp_Cyrl is not written in Arab"),
    ],
)
def test_bad_routes_are_one_line(languages, routes, message):
    with pytest.raises(BabelforgeError, match=message):
        ScriptRouter(languages, routes)


# --- ranking --------------------------------------------------------------------------------------


def test_agreement_prefers_the_form_more_sources_give():
    forms = [
        form("G", 0, "omw:fra"),
        form("cellule", 1, "omw:fra"),
        form("téléphone mobile", 2, "omw:fra"),
        form("téléphone mobile", 3, "wikt"),
        form("portable", 4, "wikt"),
    ]
    first = choose_label(forms, ENGLISH, ranking="first")
    agreement = choose_label(forms, ENGLISH, ranking="agreement", priority=("wikt", "omw"))
    assert (first.label, first.rank_reason) == ("G", "first")
    assert (agreement.label, agreement.n_sources, agreement.rank_reason) == ("téléphone mobile", 2, "agreement")
    assert agreement.source == "wikt"  # of the sources giving it, the one priority puts first


def test_agreement_then_source_priority_then_source_order():
    forms = [form("fuinha", 0, "omw:por"), form("mangusto", 1, "wikt"), form("manguço", 2, "wikt")]
    wikt_first = choose_label(forms, ENGLISH, ranking="agreement", priority=("wikt", "omw", "cldr"))
    assert (wikt_first.label, wikt_first.rank_reason) == ("mangusto", "source_order")
    omw_first = choose_label(forms, ENGLISH, ranking="agreement", priority=("omw", "wikt"))
    assert (omw_first.label, omw_first.rank_reason) == ("fuinha", "source_priority")


def test_priority_matches_full_names_and_kinds_unlisted_last():
    priority = ("omw:ell", "wikt", "omw")
    assert [priority_index(s, priority) for s in ("omw:ell", "wikt", "omw:fra", "cldr")] == [0, 1, 2, 3]


def test_per_language_priority_in_rules():
    rules = Rules(ranking="agreement", source_priority_by_lang={"ell_Grek": ("omw", "wikt")})
    senses = [
        sense("λύκος", 0, "omw:ell", lang="ell_Grek"),
        sense("κογιότ", 1, "wikt", lang="ell_Grek"),
        sense("Kojote", 0, "omw:deu"),
        sense("Präriewolf", 1, "wikt"),
    ]
    assert [c.label for c in choose_labels(senses, ENGLISH, rules=rules)] == ["Präriewolf", "λύκος"]


@pytest.mark.parametrize(
    "text, scientific",
    [
        ("Canis lupus dingo", True),
        ("canis latrans", True),
        ("Canidae", True),
        ("carnivora", True),
        ("cicadellidae", True),  # a family ending, even when the class's taxa lack the family
        ("canis", False),  # a genus alone is also a vernacular word (lynx, python, gorilla)
        ("dingo", False),
        ("canidés", False),
        ("Canis lupus dingo australis", False),  # a Latin name has at most three words
        ("Canis lupus dingo australis x", False),
        ("λύκος", False),
        ("canis lupé", False),  # the genus, then a word no Latin name has (French `python réticulé`)
        ("canis-lupus", False),  # not plain Latin words
    ],
)
def test_scientific_names(text, scientific):
    assert is_scientific_name(text, CANIS) is scientific


def test_a_vernacular_name_beats_a_scientific_one_even_with_more_sources():
    forms = [
        form("Canis lupus dingo", 0, "omw:cat"),
        form("Canis lupus dingo", 1, "wikt"),
        form("gos salvatge", 2, "wikt"),
    ]
    agreement = choose_label(forms, ENGLISH, ranking="agreement", priority=("wikt", "omw"), taxa=CANIS)
    assert (agreement.label, agreement.rank_reason) == ("gos salvatge", "vernacular")
    assert choose_label(forms, ENGLISH, ranking="first", taxa=CANIS).label == "Canis lupus dingo"
    only = choose_label(forms[:2], ENGLISH, ranking="agreement", taxa=CANIS)
    assert (only.label, only.rank_reason) == ("Canis lupus dingo", "only")


def test_candidates_merge_spellings_casefolded_keeping_the_best_spelling():
    candidates = rank_candidates(
        [form("GSM", 0, "omw:fra"), form("gsm", 1, "omw:fra"), form("GSM", 2, "wikt")], "agreement", ("wikt", "omw")
    )
    assert [(c.label, c.sources) for c in candidates] == [("GSM", ("omw:fra", "wikt"))]


# --- duplicates ----------------------------------------------------------------------------------


def cat_choices(rules):
    # Chinese: cougar, leopard and jaguar all have 美洲豹 first in the wordnet
    senses = [
        sense("美洲豹", 0, "omw:cow", synset="02125311-n", lang="zho_Hans"),
        sense("美洲狮", 1, "wikt", synset="02125311-n", lang="zho_Hans"),
        sense("美洲豹", 0, "omw:cow", synset="02128385-n", lang="zho_Hans"),
        sense("豹", 1, "omw:cow", synset="02128385-n", lang="zho_Hans"),
        sense("美洲豹", 0, "omw:cow", synset="02128925-n", lang="zho_Hans"),
        sense("美洲豹", 1, "wikt", synset="02128925-n", lang="zho_Hans"),
    ]
    return {c.synset: (c.label, c.rank_reason) for c in choose_labels(senses, ENGLISH, rules=rules)}


def test_duplicates_give_way_to_unique_candidates():
    assert cat_choices(Rules(ranking="first")) == {
        "02125311-n": ("美洲豹", "first"),
        "02128385-n": ("美洲豹", "first"),
        "02128925-n": ("美洲豹", "only"),
    }
    # jaguar has no other candidate and keeps 美洲豹; cougar and leopard take their unique ones
    assert cat_choices(Rules(ranking="first", resolve_duplicates=True)) == {
        "02125311-n": ("美洲狮", "unique"),
        "02128385-n": ("豹", "unique"),
        "02128925-n": ("美洲豹", "only"),
    }


def test_when_every_holder_has_an_alternative_the_best_supported_keeps_the_label():
    choices = [
        choose_label(
            [
                form("wieg", 0, "omw:nld", synset=s),
                form("wieg", 1, "wikt", synset=s),
                form(alt, 2, "omw:nld", synset=s),
            ],
            ENGLISH,
            ranking="agreement",
        )
        for s, alt in (("03125729-n", "bakermat"), ("03131574-n", "kinderbed"))
    ]
    choices[1] = choose_label(
        [form("wieg", 0, "omw:nld", synset="03131574-n"), form("kinderbed", 2, "omw:nld", synset="03131574-n")],
        ENGLISH,
        ranking="agreement",
    )
    resolved = resolve_duplicates(choices)
    assert [(c.label, c.rank_reason) for c in resolved] == [("wieg", "agreement"), ("kinderbed", "unique")]
    # never a candidate another class already uses: with `kinderbed` taken, the crib cannot move
    # and keeps `wieg`, so the cradle (which can) takes its alternative
    taken = choose_label([form("kinderbed", 0, synset="04000000-n")], ENGLISH)
    assert [c.label for c in resolve_duplicates(choices + [taken])] == ["bakermat", "wieg", "kinderbed"]


def test_duplicate_resolution_does_not_depend_on_input_order():
    choices = [
        choose_label([form("Kran", 0, synset=s), form(alt, 1, synset=s)], ENGLISH)
        for s, alt in (("01000000-n", "Baukran"), ("02000000-n", "Kranich"))
    ]
    forward = resolve_duplicates(choices)
    backward = resolve_duplicates(choices[::-1])[::-1]
    assert forward == backward
    assert [c.label for c in forward] == ["Kran", "Kranich"]


def test_a_label_still_held_after_its_duplicates_moved_is_no_free_alternative():
    """`Kran` stays with the first crane after the second moves to `Kranich`: a later duplicate
    (`Zange` twice) cannot move to `Kran`, since one class of the language still uses it."""
    candidates = {"01000000-n": ["Kran"], "02000000-n": ["Kran", "Kranich"], "03000000-n": ["Zange", "Kran"]}
    candidates["04000000-n"] = ["Zange"]
    choices = [
        choose_label([form(label, rank, synset=synset) for rank, label in enumerate(labels)], ENGLISH)
        for synset, labels in candidates.items()
    ]
    assert [(c.label, c.rank_reason) for c in resolve_duplicates(choices)] == [
        ("Kran", "only"),
        ("Kranich", "unique"),
        ("Zange", "first"),
        ("Zange", "only"),
    ]


def test_ambiguous_source_judges_the_label_the_class_ended_with_not_its_first_candidate():
    """The safe took `Tresor` from one source when the chest kept `Kiste`: it is that label, not the
    two-source `Kiste` ranked first, that lacks support where the English name is ambiguous."""
    ambiguous = ClassEvidence(ambiguous=True)
    safe = [form("Kiste", 0, "wikt", synset="04125021-n"), form("Kiste", 0, "omw:deu", synset="04125021-n")]
    safe.append(form("Tresor", 1, "wikt", synset="04125021-n"))
    choices = [
        choose_label([form("Kiste", 0, "wikt", synset="03014705-n")], ENGLISH, ranking="agreement", evidence=ambiguous),
        choose_label(safe, ENGLISH, ranking="agreement", evidence=ambiguous),
    ]
    assert [c.ambiguous_source for c in choices] == [False, False]
    chest, moved = resolve_duplicates(choices)
    assert (chest.label, moved.label, moved.rank_reason) == ("Kiste", "Tresor", "unique")
    assert [c.key for c in moved.candidates] == ["kiste", "tresor"]
    assert moved.ambiguous_source and not chest.ambiguous_source


# --- languages ----------------------------------------------------------------------------------


def test_min_classes_threshold():
    choices = [choose_label([form(f"w{i}", 0, synset=f"{i:08d}-n")], ENGLISH) for i in range(10)]
    choices += [choose_label([form(f"m{i}", 0, synset=f"{i:08d}-n", lang="fra_Latn")], ENGLISH) for i in range(9)]
    assert kept_languages(choices, 10) == {"deu_Latn": 10}


@pytest.mark.parametrize(
    "n, group",
    [
        (10, "very-low"),
        (100, "very-low"),
        (101, "low"),
        (333, "low"),
        (334, "mid"),
        (666, "mid"),
        (667, "high"),
        (1000, "high"),
    ],
)
def test_resource_group_bounds(n, group):
    assert resource_group(n) == group


def test_duplicates_are_flagged_not_dropped():
    import pandas as pd

    from babelforge.babel_imagenet.tables import labels_frame

    classes = pd.DataFrame(
        {"class_idx": range(5), "wnid": [f"n{i}" for i in range(5)], "synset": [f"{i:08d}-n" for i in range(5)]}
    )
    labels = [
        ("deu_Latn", "Kran"),
        ("deu_Latn", "kran"),
        ("deu_Latn", "Hai"),
        ("deu_Latn", "Schleie"),
        ("fin_Latn", "hai"),
    ]
    choices = [
        LabelChoice(f"{i:08d}-n", lang, label, "wikt", 0, 1, 0, 0, 0, False) for i, (lang, label) in enumerate(labels)
    ]
    frame = labels_frame(choices, classes)
    # the duplicate tagger the audit counts with: within a language, NFC + strip + casefold
    assert frame["is_duplicate"].tolist() == [True, True, False, False, False]


def test_english_rows_are_clip_names():
    rows = english_rows({"01443537-n": "goldfish", "01440764-n": "tench"})
    # one source, the CLIP name, first and only of its one sense, nothing dropped (labels.parquet's columns)
    assert rows == [
        LabelChoice("01440764-n", "eng_Latn", "tench", "clip", 0, 1, 0, 0, 0, False, "tench", None, 1, "only"),
        LabelChoice("01443537-n", "eng_Latn", "goldfish", "clip", 0, 1, 0, 0, 0, False, "goldfish", None, 1, "only"),
    ]


def test_every_language_asked_for_gets_its_fate_named():
    from babelforge.babel_imagenet.language_fates import fates_line, language_fates

    def choice(i, lang, label):
        return LabelChoice(f"{i:08d}-n", lang, label, "wikt", 0, 1, 0, 0, 0, False)

    choices = [choice(i, "deu_Latn", f"w{i}") for i in range(3)]
    choices += [choice(0, "fin_Latn", "hai"), choice(1, "fin_Latn", None), choice(0, "xyz_Latn", "q")]
    fates = language_fates(choices)
    # deu: 3 labelled classes (kept at exactly min_classes); fin: one labelled, one dropped by a rule
    assert fates == {"deu_Latn": 3, "fin_Latn": 1, "xyz_Latn": 1}
    wanted = ["als_Latn", "deu_Latn", "fin_Latn"]
    assert fates_line(fates, 3, wanted, before=["fin_Latn"]) == (
        "languages: 1 kept; since the last build: +deu_Latn 3; -fin_Latn; fewer than min_classes 3 classes: "
        "fin_Latn 1 (and 1 other languages); no sense source covers 1 Babel-ImageNet languages: als_Latn"
    )
    assert fates_line({"deu_Latn": 3}, 3, ["deu_Latn"], before=["deu_Latn"]) == (
        "languages: 1 kept; since the last build: none joined; none left"
    )
    assert fates_line({"deu_Latn": 3}, 3, ["deu_Latn"], before=None) == "languages: 1 kept"


def test_fates_name_wanted_languages_below_the_threshold_and_count_the_others():
    from babelforge.babel_imagenet.language_fates import fates_line, language_fates

    unlabelled = [LabelChoice(f"{i:08d}-n", "deu_Latn", None, None, None, 1, 0, 0, 0, False) for i in range(2)]
    assert language_fates(unlabelled) == {"deu_Latn": 0}  # senses, but every class lost its label
    # exactly min_classes is kept; below it a wanted language is named, the others only counted
    fates = {"deu_Latn": 1, "fin_Latn": 2, "abc_Latn": 2, "qqq_Latn": 1, "xyz_Latn": 1}
    assert fates_line(fates, 2, ["deu_Latn", "fin_Latn"], before=None) == (
        "languages: 2 kept; fewer than min_classes 2 classes: deu_Latn 1 (and 2 other languages)"
    )
    assert fates_line({"deu_Latn": 1, "fin_Latn": 2}, 2, ["deu_Latn", "fin_Latn"], before=None) == (
        "languages: 1 kept; fewer than min_classes 2 classes: deu_Latn 1"
    )
    assert fates_line({"xyz_Latn": 1, "fin_Latn": 2}, 2, ["fin_Latn"], before=None) == (
        "languages: 1 kept; fewer than min_classes 2 classes: no Babel-ImageNet language (and 1 other languages)"
    )
