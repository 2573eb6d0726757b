"""labels.choose_labels around the rules' edges: the sources' trust estimated with the rule off, a form
passed over (another language's, a mixed-script one) that would or would not have won, and each source's
own order for the trust estimate."""

import dataclasses

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.label_rules import Rules
from babelforge.babel_imagenet.labels import choose_labels, source_classes
from babelforge.babel_imagenet.purity import MIXED_SCRIPT
from babelforge.babel_imagenet.ranking import LEARNED_PRIORITY
from babelforge.babel_imagenet.script_routing import ScriptRouter
from babelforge.babel_imagenet.trust import MIN_EVIDENCE, comparison_key
from babelforge.core.languages import registry
from babelforge.lexicon.senses import Sense

TENCH, SHOE, COTTONTAIL = "01440764-n", "04120489-n", "02325366-n"


def greek_evidence() -> list[Sense]:
    """Greek-like data where the wordnet's first form rarely agrees with Wiktionary (enough classes for a
    learned order), and one class `x-n` where the two sources' first forms differ."""
    senses = []
    for i in range(MIN_EVIDENCE):
        senses += [
            Sense(f"{i}-n", "ell_Grek", f"λέξη{i}", "wikt", False, 0),
            Sense(f"{i}-n", "ell_Grek", f"άλλη{i}", "omw:ell", False, 0),
            Sense(f"{i}-n", "ell_Grek", f"λέξη{i}", "omw:ell", False, 1),
        ]
    return senses + [
        Sense("x-n", "ell_Grek", "αλέτρι", "wikt", False, 0),
        Sense("x-n", "ell_Grek", "άροτρο", "omw:ell", False, 0),
    ]


WRITTEN = Rules(ranking="agreement", source_priority_by_lang={"ell_Grek": ("omw", "wikt", "cldr")})


def test_the_learned_order_ranks_even_when_no_caller_asks_for_the_estimates():
    rules = dataclasses.replace(WRITTEN, learned_priority=True)
    choices = {c.synset: c for c in choose_labels(greek_evidence(), frozenset(), rules=rules)}
    assert (choices["x-n"].label, choices["x-n"].rank_reason) == ("αλέτρι", LEARNED_PRIORITY)


def test_with_the_rule_off_the_estimates_are_still_given_and_the_written_order_ranks():
    learned: list = []
    choices = {c.synset: c for c in choose_labels(greek_evidence(), frozenset(), rules=WRITTEN, learned=learned)}
    assert (choices["x-n"].label, choices["x-n"].rank_reason) == ("άροτρο", "source_priority")
    assert len(learned) == 1 and learned[0].orders["ell_Grek"] == ("wikt", "omw:ell")
    assert {estimate.source for estimate in learned[0].estimates if estimate.lang == "ell_Grek"} == {"wikt", "omw:ell"}


def test_a_source_s_own_forms_come_before_those_routed_in_from_another_key_in_its_order():
    def form(label, rank, routed_from=None):
        return Form(TENCH, "srp_Cyrl", label, label, "wikt", False, rank, routed_from=routed_from)

    grouped = {("srp_Cyrl", TENCH): [form("линак", 0, routed_from="hbs_Latn"), form("лињак", 2)]}
    (classes,) = source_classes(grouped, frozenset(), Rules())
    assert classes.first == {"wikt": comparison_key("лињак")}


def malay_lean(lang, other, label):
    """Wordnet Bahasa's `kasut` leans Malay (a stand-in for frequency.language_lean's Zipf bound)."""
    return 2.0 if (lang, other, label) == ("ind_Latn", "zsm_Latn", "kasut") else None


def test_a_class_whose_only_form_is_another_language_s_is_left_without_any_label_field():
    senses = [
        Sense(SHOE, "ind_Latn", "kasut", "omw:msa", False, 0),
        Sense(SHOE, "zsm_Latn", "kasut", "omw:msa", False, 0),
    ]
    choices = {c.lang: c for c in choose_labels(senses, frozenset(), rules=Rules(purity=malay_lean))}
    emptied = choices["ind_Latn"]
    assert (emptied.label, emptied.source, emptied.rank, emptied.n_sources, emptied.rank_reason) == (None,) * 3 + (
        0,
        "",
    )
    assert emptied.n_senses == 1 and emptied.candidates == ()
    assert (choices["zsm_Latn"].label, choices["zsm_Latn"].n_sources) == ("kasut", 1)


def test_a_passed_form_that_would_not_have_won_leaves_the_rank_reason_alone():
    senses = [
        Sense(SHOE, "ind_Latn", "sepatu", "omw:msa", False, 0),
        Sense(SHOE, "ind_Latn", "kasut", "omw:msa", False, 1),  # Malay, ranked below: it changes nothing
        Sense(SHOE, "zsm_Latn", "kasut", "omw:msa", False, 0),
    ]
    choices = {c.lang: c for c in choose_labels(senses, frozenset(), rules=Rules(purity=malay_lean))}
    # the reason of the choice among the kept forms (`sepatu` is their only one), not `purity`
    assert (choices["ind_Latn"].label, choices["ind_Latn"].rank_reason) == ("sepatu", "only")
    assert choices["ind_Latn"].n_senses == 2  # the passed form still counts among the class's forms


def test_a_mixed_script_form_is_chosen_and_marked_when_the_class_s_clean_forms_give_no_label():
    senses = [
        Sense(COTTONTAIL, "ell_Grek", "κουνέλι γένους sylvilagus", "omw:ell", False, 0),  # "rabbit of the genus"
        Sense(COTTONTAIL, "ell_Grek", "λαγουδάκι", "WNTR", True, 1),  # clean, but a machine translation
    ]
    choices = choose_labels(
        senses,
        frozenset(),
        ScriptRouter(registry()),
        Rules(script_span=True),
        class_names={COTTONTAIL: ("cottontail",)},
    )
    assert [(c.label, c.rank_reason, c.n_dropped_mt) for c in choices] == [
        ("κουνέλι γένους sylvilagus", MIXED_SCRIPT, 1)
    ]
