"""label_choice: a class left without a label, by the rules or by the precision floor, says so in every field
(no source, no rank, no source giving it), so a reader of the choice never mistakes it for a labelled one."""

from babelforge.babel_imagenet.label_choice import PRECISION_FLOOR, choose_label, drop_label
from tests.babel_imagenet.test_labels import ENGLISH, form


def test_a_class_whose_every_form_the_rules_dropped_has_no_label_and_no_source_giving_it():
    choice = choose_label([form("Tench", 0), form("Schlei", 1, source="WNTR", mt=True)], ENGLISH)
    assert (choice.label, choice.source, choice.rank, choice.raw_lemma, choice.n_sources) == (None, None, None, None, 0)
    assert (choice.n_senses, choice.n_dropped_english, choice.n_dropped_mt) == (2, 1, 1)
    assert (choice.used_low_precision, choice.rank_reason, choice.candidates) == (False, "", ())


def test_the_floor_takes_the_label_and_every_field_about_it_but_keeps_the_candidates():
    choice = choose_label(
        [form("Schleie", 0, source="wikt"), form("schleie", 1, source="omw:odenet"), form("Grünschleie", 2)], ENGLISH
    )
    assert (choice.label, choice.n_sources) == ("Schleie", 2)
    dropped = drop_label(choice, PRECISION_FLOOR)
    assert (dropped.label, dropped.source, dropped.rank, dropped.raw_lemma, dropped.routed_from) == (None,) * 5
    assert (dropped.n_sources, dropped.rank_reason) == (0, PRECISION_FLOOR)
    assert [c.label for c in dropped.candidates] == ["Schleie", "Grünschleie"]
    assert (dropped.n_senses, dropped.synset, dropped.lang) == (3, choice.synset, choice.lang)
