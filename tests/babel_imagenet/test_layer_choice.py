"""labels.choose: lexicon (issue 48 item 3): the lexicon layer chooses among a class's candidates.

The pure parts on small tables: which later forms may be chosen, their evidence as if chosen, when the
layer's preference wins (the stage on the sample chain: test_layer_choice_stage.py).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.label_choice import LEXICON_CHOICE, choose_label, rechoose
from babelforge.babel_imagenet.label_evidence import (
    LEXICON_FEATURES,
    as_if_chosen,
    choice_table,
    later_forms,
    preferred_labels,
)
from babelforge.babel_imagenet.precision import UNKNOWN_PRECISION, p_correct


def candidate_rows(rows: list[tuple]) -> pd.DataFrame:
    """candidates.parquet rows of German classes: (wnid, label, source, rank, set_aside, agreement)."""
    frame = pd.DataFrame(rows, columns=["wnid", "label", "source", "rank", "set_aside", "agreement"])
    return frame.assign(lang="deu_Latn", chosen=frame["set_aside"] == "", zipf=np.nan)


CANDIDATES = candidate_rows(
    [
        ("n1", "Hund", "omw:deu", 0, "", 2),
        ("n1", "hund", "wikt", 1, "not_first", 2),  # the chosen label's key from another source: not a choice
        ("n1", "Köter", "wikt", 2, "not_first", 2),
        ("n1", "Köter", "omw:deu", 3, "not_first", 2),  # the same label again: one row, the first
        ("n1", "Rüde", "wikt", 4, "english", 1),  # set aside by a rule: never chosen
        ("n1", "Töle", "omw:deu", 5, "not_first", 1),
        ("n1", "Kläffer", "wikt", 6, "not_first", 1),  # a third turn: each pass holds one form per class
        ("n2", "Katze", "wikt", 0, "", 1),
        ("n3", "Maus", "wikt", 0, "", 1),
        ("n3", "Köter", "wikt", 1, "not_first", 1),
        ("n4", "Vogel", "wikt", 0, "precision_floor", 1),  # the floor dropped the class: no choice left
        ("n4", "Piepmatz", "wikt", 1, "precision_floor", 1),
    ]
)


def test_the_later_forms_a_class_may_choose_are_one_row_per_other_label_in_rank_order():
    forms = later_forms(CANDIDATES)
    assert list(zip(forms["wnid"], forms["label"], forms["source"], forms["turn"])) == [
        ("n1", "Köter", "wikt", 0),
        ("n1", "Töle", "omw:deu", 1),
        ("n1", "Kläffer", "wikt", 2),
        ("n3", "Köter", "wikt", 0),
    ]


def labels_of(candidates: pd.DataFrame) -> pd.DataFrame:
    """labels.parquet rows of the classes' rules choices."""
    chosen = candidates[candidates["set_aside"] == ""]
    return pd.DataFrame(
        {
            "lang": chosen["lang"],
            "wnid": chosen["wnid"],
            "label": chosen["label"],
            "source": chosen["source"],
            "rank": chosen["rank"],
            "n_sources": chosen["agreement"],
            "n_senses": 4,
            "n_dropped_english": 0,
            "is_duplicate": False,
            "ambiguous_source": True,  # the old label's flag: not the later form's
            "used_low_precision": [False, False, True],
            "rank_reason": "agreement",
            "p_correct": 0.7,
            "p_rules": 0.7,
        }
    ).reset_index(drop=True)


def test_a_later_form_as_if_chosen_carries_its_own_evidence_and_the_rules_formula_on_it():
    labels = labels_of(CANDIDATES)
    forms = later_forms(CANDIDATES)
    turn = forms[forms["turn"] == 0]
    precision = {("deu_Latn", "wikt"): 0.9}
    moved_labels, moved = as_if_chosen(labels, CANDIDATES, turn, precision)
    rows = moved_labels.set_index("wnid")
    assert list(rows.loc["n1", ["label", "source", "rank", "n_sources", "rank_reason"]]) == [
        "Köter", "wikt", 2, 2, "not_first",
    ]  # fmt: skip
    # n1: two sources in the class (omw:deu, wikt), both give Köter: one agreeing, none silent, no flag
    assert rows.loc["n1", "p_rules"] == p_correct(0.9, 1, 0, 0)
    assert not rows.loc["n1", "ambiguous_source"]
    # n3: no other class keeps Köter in `labels` (n1 keeps Hund there), so no duplicate; the class used a
    # low-precision form, which stays a flag
    assert not rows.loc["n3", "is_duplicate"] and rows.loc["n3", "p_rules"] == p_correct(0.9, 0, 0, 1)
    assert rows.loc["n2", "label"] == "Katze" and rows.loc["n2", "p_rules"] == 0.7  # not in the turn
    chosen = moved[moved["chosen"]]
    assert sorted(zip(chosen["wnid"], chosen["label"], chosen["rank"])) == [
        ("n1", "Köter", 2), ("n2", "Katze", 0), ("n3", "Köter", 1),
    ]  # fmt: skip
    # a source with no estimate counts as UNKNOWN_PRECISION; a later form another class keeps is a duplicate
    taken = labels.assign(label=["Hund", "Töle", "Maus"])
    second, _ = as_if_chosen(taken, CANDIDATES, later_forms(CANDIDATES).query("turn == 1"), {})
    toele = second.set_index("wnid").loc["n1"]
    assert toele["label"] == "Töle" and toele["is_duplicate"]
    assert toele["p_rules"] == p_correct(UNKNOWN_PRECISION, 0, 1, 1)  # wikt silent, a duplicate


def test_every_class_and_later_form_is_scored_once():
    table = choice_table(labels_of(CANDIDATES), CANDIDATES, {("deu_Latn", "wikt"): 0.9})
    assert sorted(zip(table["wnid"], table["label"], table["later"])) == [
        ("n1", "Hund", False), ("n1", "Kläffer", True), ("n1", "Köter", True), ("n1", "Töle", True),
        ("n2", "Katze", False), ("n3", "Köter", True), ("n3", "Maus", False),
    ]  # fmt: skip
    assert set(LEXICON_FEATURES) <= set(table.columns)


def scored(rows: list[tuple]) -> tuple[pd.DataFrame, np.ndarray]:
    """A choice_table-like frame and its p: (wnid, label, later, duplicate, p)."""
    frame = pd.DataFrame(rows, columns=["wnid", "label", "later", "duplicate", "p"]).assign(lang="deu_Latn")
    return frame.drop(columns="p"), frame["p"].to_numpy()


def test_the_layer_takes_a_later_form_only_where_it_scores_higher_and_no_other_class_has_it():
    table, p = scored(
        [
            ("n1", "Hund", False, 0.0, 0.5),
            ("n1", "Köter", True, 0.0, 0.7),
            ("n1", "Töle", True, 0.0, 0.6),  # higher than the chosen, lower than Köter
            ("n2", "Katze", False, 0.0, 0.8),
            ("n2", "Mieze", True, 0.0, 0.8),  # a tie keeps the rules' label
            ("n3", "Maus", False, 0.0, 0.2),
            ("n3", "Hund", True, 1.0, 0.9),  # another class keeps it
            ("n4", "Vogel", False, 0.0, 0.1),
            ("n4", "Piepmatz", True, 0.0, 0.5),
            ("n5", "Spatz", False, 0.0, 0.1),
            ("n5", "Piepmatz", True, 0.0, 0.6),  # two classes would take it: neither does
        ]
    )
    assert preferred_labels(table, p) == {("deu_Latn", "n1"): "Köter"}


def test_rechoose_takes_the_named_candidate_with_its_own_source_and_rank():
    forms = [
        Form("s1", "deu_Latn", "Hund", "Hund", "omw:deu", False, 0),
        Form("s1", "deu_Latn", "Köter", "Köter", "wikt", False, 1),
        Form("s1", "deu_Latn", "köter", "köter", "omw:deu", False, 2),
    ]
    choice = choose_label(forms, frozenset())
    assert (choice.label, choice.source) == ("Hund", "omw:deu")
    again = rechoose(choice, "KÖTER")
    assert (again.label, again.source, again.rank, again.n_sources, again.rank_reason) == (
        "Köter", "wikt", 1, 2, LEXICON_CHOICE,
    )  # fmt: skip
    assert (again.synset, again.lang, again.n_senses, again.candidates) == (
        choice.synset, choice.lang, choice.n_senses, choice.candidates,
    )  # fmt: skip
    with pytest.raises(ValueError, match="Katze"):
        rechoose(choice, "Katze")


def test_a_class_without_a_label_row_offers_no_choice():
    labels = labels_of(CANDIDATES)
    without_n3 = labels[labels["wnid"] != "n3"]
    table = choice_table(without_n3, CANDIDATES, {})
    assert "n3" not in set(table["wnid"])
    with pytest.raises(ValueError, match="no label row"):
        as_if_chosen(without_n3, CANDIDATES, later_forms(CANDIDATES).query("wnid == 'n3'"), {})
