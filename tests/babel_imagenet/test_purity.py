"""The purity rules: a shared wordnet's forms of the sibling language, and foreign-script spans."""

from collections import Counter

import pytest

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.frequency import covered_languages, language_lean, list_floor
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels
from babelforge.babel_imagenet.purity import (
    MIXED_SCRIPT,
    PURITY_MARGIN,
    foreign_forms,
    shared_sources,
    split_span,
    strip_script_spans,
    uncovered_pairs,
)
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.core.languages import registry
from babelforge.lexicon.omw import OmwSource

from .test_labels import ENGLISH

CLOGS, TRUMPET, WARDROBE, FILE_CABINET, MOSQUE = "03047690-n", "03110669-n", "04550184-n", "03337140-n", "03788195-n"
JAGUAR, TICK, DRAGONFLY, COTTONTAIL, GRANNY_SMITH = "02128925-n", "01776313-n", "02268443-n", "02325366-n", "07742313-n"


def form(label, lang, source="omw:msa", synset=CLOGS, rank=0):
    return Form(synset, lang, label, label, source, False, rank)


@pytest.fixture(scope="module")
def lean():
    return language_lean(registry())


@pytest.fixture(scope="module")
def omw(shared_data):
    return OmwSource(shared_data / "omw")


# --- shared wordnets -------------------------------------------------------------------------------


def test_the_lean_is_a_lower_bound_that_a_small_list_cannot_fake(lean):
    # Indonesian's and Malay's lists stop at Zipf 3: a word missing there is rarer than that, no more
    assert list_floor("id") == pytest.approx(3.0, abs=0.05)
    assert list_floor("nb") < 2  # Bokmål has a large list
    assert lean("ind_Latn", "zsm_Latn", "kasut kayu") >= PURITY_MARGIN  # `kasut` is Malay's shoe
    assert lean("zsm_Latn", "ind_Latn", "kasut kayu") < PURITY_MARGIN
    assert lean("ind_Latn", "zsm_Latn", "trompet") < PURITY_MARGIN  # missing from the Indonesian list only
    assert lean("zsm_Latn", "ind_Latn", "sepatu") >= PURITY_MARGIN  # and the other way round
    assert lean("nno_Latn", "nob_Latn", "kyrkje") is None  # wordfreq has no Nynorsk: no evidence


def test_a_form_is_foreign_only_on_a_shared_line_with_no_other_source_and_a_tenfold_lean():
    def lean(lang, other, label):  # Malay-leaning words, weighed for Indonesian
        bound = {"selop": 2.0, "ketam": 0.5}.get(label)
        return bound if (lang, other) == ("ind_Latn", "zsm_Latn") else -bound

    shared = form("selop", "ind_Latn"), form("selop", "zsm_Latn")
    own_file = form("selop", "ind_Latn", synset=TRUMPET)  # only in the Indonesian file: the project's own call
    attested = form("selop", "ind_Latn", synset=WARDROBE), form("selop", "zsm_Latn", synset=WARDROBE)
    close = form("ketam", "ind_Latn"), form("ketam", "zsm_Latn")
    forms = [*shared, own_file, *close]
    assert foreign_forms(forms, lean) == {shared[0]: "zsm_Latn"}
    # Wiktionary gives the word in Indonesian (any class): it is Indonesian too
    assert foreign_forms([*forms, *attested, form("selop", "ind_Latn", "wikt", MOSQUE)], lean) == {}
    # a language wordfreq does not cover: no evidence either way
    assert foreign_forms(forms, lambda lang, other, label: None) == {}


def test_shared_sources_are_wordnet_projects_serving_several_languages():
    forms = [form("a", "ind_Latn"), form("a", "zsm_Latn"), form("a", "ind_Latn", "wikt"), form("a", "zsm_Latn", "wikt")]
    assert shared_sources(forms) == {"omw:msa": frozenset({"ind_Latn", "zsm_Latn"})}  # Wiktionary's files are not


def test_on_the_wordnet_bahasa_files_malay_words_leave_indonesian(omw, lean):
    synsets = [CLOGS, TRUMPET, WARDROBE, FILE_CABINET, MOSQUE]
    senses = list(omw.senses(synsets, langs=["ind_Latn", "zsm_Latn"]))
    router = ScriptRouter(registry())
    forms = [Form(s.synset, s.lang, s.lemma, s.lemma, s.source, False, s.rank) for s in senses]
    foreign = {(f.lang, f.synset, f.label) for f in foreign_forms(forms, lean)}
    assert ("ind_Latn", CLOGS, "kasut kayu") in foreign  # the same line stands in the Malay file
    assert ("ind_Latn", WARDROBE, "almari") in foreign and ("zsm_Latn", WARDROBE, "lemari") in foreign
    assert not any(synset == TRUMPET for _, synset, _ in foreign)  # `trompet` is Indonesian too
    rules = Rules(ranking="agreement", purity=lean)
    tally = Counter()
    choices = {(c.lang, c.synset): c for c in choose_labels(senses, ENGLISH, router, rules, tally=tally)}
    assert choices[("ind_Latn", CLOGS)].label in ("geta", "terompah")  # the file's other forms
    # Malay's `fail` (a file) came first alphabetically; Indonesian has only `katalog` left
    assert (choices[("ind_Latn", FILE_CABINET)].label, choices[("ind_Latn", FILE_CABINET)].rank_reason) == (
        "katalog",
        "purity",
    )
    assert choices[("ind_Latn", TRUMPET)].label == "trompet"
    assert choices[("zsm_Latn", WARDROBE)].label == "almari"
    assert tally[("ind_Latn", "n_dropped_other_language")] == len([f for f in foreign if f[0] == "ind_Latn"])
    without = {(c.lang, c.synset): c for c in choose_labels(senses, ENGLISH, router, Rules(ranking="agreement"))}
    assert without[("ind_Latn", FILE_CABINET)].label == "fail"  # the rule switched off: as before
    assert "kasut kayu" in {c.label for c in without[("ind_Latn", CLOGS)].candidates}


def test_pairs_wordfreq_cannot_weigh_are_named(omw):
    senses = list(omw.senses([WARDROBE, "02699494-n"], langs=["nob_Latn", "nno_Latn", "ind_Latn", "zsm_Latn"]))
    assert uncovered_pairs(senses, covered_languages(registry())) == [("nno_Latn", "nob_Latn")]


# --- script spans ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words, foreign, expected",
    [
        ("τζάγκουαρ felis onca", [False, True, True], ("τζάγκουαρ", "felis onca")),
        ("Granny Smith μήλο", [True, True, False], ("μήλο", "Granny Smith")),
        ("a β c", [True, False, True], ("β", "a c")),
        ("α b γ", [False, True, False], None),  # a foreign word inside the name: nothing stands alone
        ("α β", [False, False], None),
        ("a b", [True, True], None),  # all foreign: script routing decides
    ],
)
def test_split_span(words, foreign, expected):
    assert split_span(words.split(), foreign) == expected


def greek(label, synset, source="omw:ell"):
    return Form(synset, "ell_Grek", label, label, source, False, 0)


def test_a_span_is_stripped_only_where_the_rest_stands_alone():
    router = ScriptRouter(registry())
    names = {JAGUAR: ("jaguar", "Felis onca"), GRANNY_SMITH: ("Granny Smith",), COTTONTAIL: ("cottontail",)}
    forms = [
        greek("τζάγκουαρ felis onca", JAGUAR),
        greek("ιαγουάρος", JAGUAR, "wikt"),  # the class has a plain name: the span's rest is a new, unattested one
        greek("μήλο Granny Smith", GRANNY_SMITH),  # nothing else, the span is the class's name
        greek("κουνέλι γένους sylvilagus", COTTONTAIL),  # "rabbit of the genus": the span is no name of the class
        greek("νυφίτσα mustela nigripes", "02443484-n"),
        greek("νυφίτσα", "02441942-n"),  # the rest names another class (weasel)
        greek("οικογένεια ixodoide", TICK),
        greek("οικογένεια", TICK, "wikt"),  # the rest is another form of the class: the span only qualified it
    ]
    tally = Counter()
    result = {(f.synset, f.raw): f for f in strip_script_spans(forms, router.route, names, tally)}
    assert result[(GRANNY_SMITH, "μήλο Granny Smith")].label == "μήλο"
    assert result[(GRANNY_SMITH, "μήλο Granny Smith")].cleaned == ("script_span",)
    assert result[(TICK, "οικογένεια ixodoide")].label == "οικογένεια"
    for synset, raw in [(JAGUAR, "τζάγκουαρ felis onca"), (COTTONTAIL, "κουνέλι γένους sylvilagus")]:
        assert (result[(synset, raw)].label, result[(synset, raw)].flag) == (raw, MIXED_SCRIPT)
    assert result[("02443484-n", "νυφίτσα mustela nigripes")].flag == MIXED_SCRIPT
    assert tally == Counter({("ell_Grek", "n_cleaned_script_span"): 2, ("ell_Grek", "n_mixed_script"): 3})


def test_on_the_greek_wordnet_mixed_labels_give_way(omw):
    senses = list(omw.senses([JAGUAR, TICK, DRAGONFLY, COTTONTAIL], langs=["ell_Grek"]))
    router = ScriptRouter(registry())
    names = {JAGUAR: ("jaguar", "Panthera onca", "Felis onca")}
    greek_first = {"ell_Grek": ("omw", "wikt", "cldr")}  # the Greek wordnet first, as params.yaml once had it
    rules = Rules(ranking="agreement", source_priority_by_lang=greek_first, script_span=True)
    choices = {c.synset: c for c in choose_labels(senses, ENGLISH, router, rules, class_names=names)}
    assert (choices[JAGUAR].label, choices[JAGUAR].rank_reason) == ("ιαγουάρος", "script_span")
    assert choices[TICK].label == "τσιμπούρι" and choices[DRAGONFLY].label == "λιβελλούλη"
    # nothing else for the cottontail: the mixed label stays, marked
    assert (choices[COTTONTAIL].label, choices[COTTONTAIL].rank_reason) == ("κουνέλι γένους sylvilagus", MIXED_SCRIPT)
    off = Rules(ranking="agreement", source_priority_by_lang=greek_first)
    before = {c.synset: c.label for c in choose_labels(senses, ENGLISH, router, off)}
    assert before[JAGUAR] == "τζάγκουαρ felis onca" and before[TICK] == "οικογένεια ixodoide"


def test_candidates_say_why_a_form_was_set_aside(omw, lean):
    from babelforge.babel_imagenet.candidates import SET_ASIDE, candidate_rows

    senses = list(omw.senses([FILE_CABINET, JAGUAR], langs=["ind_Latn", "zsm_Latn", "ell_Grek"]))
    router = ScriptRouter(registry())
    rules = Rules(
        ranking="agreement",
        source_priority_by_lang={"ell_Grek": ("omw", "wikt", "cldr")},
        purity=lean,
        script_span=True,
    )
    choices = choose_labels(senses, ENGLISH, router, rules)
    wnids = {FILE_CABINET: (553, "n03337140"), JAGUAR: (290, "n02128925")}
    rows = candidate_rows(senses, choices, wnids, ENGLISH, rules, router)
    reasons = {(row["lang"], row["label"]): row["set_aside"] for row in rows}
    assert reasons[("ind_Latn", "fail")] == "other_language"
    assert reasons[("zsm_Latn", "fail")] == ""  # Malay keeps its own word
    assert reasons[("ell_Grek", "τζάγκουαρ felis onca")] == "mixed_script"
    assert {"other_language", "mixed_script"} <= SET_ASIDE.keys()


def test_a_lean_of_exactly_the_margin_marks_a_form_foreign():
    """The margin is a lower bound that counts (tenfold is foreign): a lean of exactly PURITY_MARGIN is enough."""
    shared = form("selop", "ind_Latn"), form("selop", "zsm_Latn")
    at_margin = foreign_forms(list(shared), lambda lang, other, label: PURITY_MARGIN if lang == "ind_Latn" else -1.0)
    assert at_margin == {shared[0]: "zsm_Latn"}
    just_below = PURITY_MARGIN - 1e-9
    assert foreign_forms(list(shared), lambda lang, other, label: just_below if lang == "ind_Latn" else -1.0) == {}
