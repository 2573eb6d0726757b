"""The latent-truth model of source accuracies (latent_truth.py, issue 48) on votes drawn from known
accuracies: EM recovers them where three sources overlap, keeps the pooled prior (with only its
evidence) where nothing overlaps, and holds a person's verdict fixed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from babelforge.babel_imagenet.latent_truth import (
    NOT_A_LABEL,
    POOL_STRENGTH,
    candidate_classes,
    class_posterior,
    class_votes,
    fit,
    label_posterior,
)
from babelforge.babel_imagenet.precision import auc, spearman


def simulated_rows(lang: str, accuracy: dict[str, float], classes: int, seed: int) -> list[dict]:
    """candidates.parquet-like rows: each source's one form is the class's true name with its
    accuracy, else a wrong name of its own."""
    rng = random.Random(seed)
    rows = []
    for idx in range(classes):
        for rank, (source, acc) in enumerate(sorted(accuracy.items())):
            label = f"true{idx}" if rng.random() < acc else f"wrong{idx}-{source}"
            rows.append({"lang": lang, "class_idx": idx, "label": label, "source": source, "rank": rank})
    return rows


def test_em_recovers_source_accuracies_where_three_sources_overlap():
    truth = {"wikt": 0.9, "omw:a": 0.6, "omw:b": 0.8}
    model = fit(candidate_classes(simulated_rows("xxx_Latn", truth, 600, seed=1)))
    for source, accuracy in truth.items():
        learned = model.accuracy[("xxx_Latn", source)]
        assert abs(learned.value - accuracy) < 0.06, (source, learned)
        assert learned.evidence == 600 + POOL_STRENGTH  # every class checks every vote
    right = [p for (_, _, label), p in model.posterior.items() if label.startswith("true")]
    wrong = [p for (_, _, label), p in model.posterior.items() if label.startswith("wrong")]
    assert sum(right) / len(right) > 0.8 and sum(wrong) / len(wrong) < 0.35


def test_a_language_with_one_source_keeps_the_pooled_prior_with_only_its_evidence():
    rows = simulated_rows("xxx_Latn", {"wikt": 0.9, "omw:a": 0.7, "omw:b": 0.8}, 300, seed=2)
    rows += simulated_rows("yyy_Latn", {"wikt": 0.3}, 50, seed=3)  # no overlap: its 0.3 cannot be seen
    model = fit(candidate_classes(rows))
    alone = model.accuracy[("yyy_Latn", "wikt")]
    assert alone.evidence == POOL_STRENGTH  # the prior only: a wide interval downstream
    assert alone.value == pytest.approx(model.pooled["wikt"], abs=1e-3)
    assert alone.variance() > 5 * model.accuracy[("xxx_Latn", "wikt")].variance()
    # a lone vote's posterior is its source's accuracy
    assert model.posterior[("yyy_Latn", 0, next(r["label"] for r in rows if r["lang"] == "yyy_Latn"))] == (
        pytest.approx(alone.value, abs=1e-3)
    )


def test_a_persons_verdict_is_kept():
    classes = candidate_classes(simulated_rows("xxx_Latn", {"wikt": 0.9, "omw:a": 0.7}, 100, seed=4))
    label = classes[0].votes[0][1]
    key = ("xxx_Latn", classes[0].class_idx, label)
    assert fit(classes, known={key: True}).posterior[key] == 1.0
    assert fit(classes, known={key: False}).posterior[key] == 0.0


def test_a_source_listing_anothers_first_form_votes_for_it():
    votes = class_votes("x", 7, [("Burg", "wikt", 0), ("Schloss", "wikt", 1), ("Schloss", "omw:deu", 2)])
    assert votes.votes == (("omw:deu", "Schloss"), ("wikt", "Schloss"))
    assert class_votes("x", 7, [("Burg", "wikt", 0), ("Festung", "omw:deu", 1)]).votes == (
        ("omw:deu", "Festung"),
        ("wikt", "Burg"),
    )


def test_a_synonym_nobody_votes_for_is_a_second_choice():
    model = fit([class_votes("x", 1, [("Burg", "wikt", 0), ("Schloss", "wikt", 1)])])
    assert label_posterior(model, "x", 1, "Schloss", "wikt") < label_posterior(model, "x", 1, "Burg", "wikt")


def test_cleaned_out_forms_are_no_votes():
    rows = [
        {"lang": "x", "class_idx": 1, "label": "a", "source": "wikt", "rank": 0, "set_aside": ""},
        {"lang": "x", "class_idx": 1, "label": "b", "source": "omw:x", "rank": 1, "set_aside": sorted(NOT_A_LABEL)[0]},
    ]
    assert [c.votes for c in candidate_classes(rows)] == [(("wikt", "a"),)]
    assert candidate_classes(rows, skip_langs=["x"]) == []


accuracies = st.floats(0.05, 0.95)


@settings(max_examples=200, deadline=None)
@given(first=accuracies, second=accuracies, agree=st.booleans())
def test_posteriors_are_a_distribution_and_agreement_raises_them(first, second, agree):
    forms = [("a", "s1", 0), ("a" if agree else "b", "s2", 1)]
    posterior = class_posterior(class_votes("x", 1, forms), {"s1": first, "s2": second})
    assert all(0 < p < 1 for p in posterior.values()) and sum(posterior.values()) < 1
    alone = class_posterior(class_votes("x", 1, forms[:1]), {"s1": first})["a"]
    assert alone == pytest.approx(first, abs=1e-9)
    assert (posterior["a"] > alone) if agree else (posterior["a"] < alone)


def test_auc_and_spearman():
    assert auc([(0.9, True), (0.8, True), (0.3, False)]) == 1.0
    assert auc([(0.2, True), (0.8, False)]) == 0.0
    assert auc([(0.5, True), (0.5, False)]) == 0.5
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0


def test_on_the_sample_build_a_prior_only_language_has_nothing_the_model_can_learn_from(sample_chain):
    """Two independent counts of overlap agree on the real candidates: a language whose figure
    says `prior` (trust.py found no class two sources share) gives the latent-truth model no
    checked vote either, so its accuracies are the pool's with only the pool's evidence."""
    import pandas as pd

    from babelforge.babel_imagenet.precision import PRIOR

    candidates = pd.read_parquet(sample_chain / "bi" / "candidates.parquet")
    languages = pd.read_parquet(sample_chain / "bi" / "languages.parquet")
    model = fit(candidate_classes(candidates.to_dict("records"), skip_langs=["eng_Latn"]))
    basis = dict(zip(languages["lang"], languages["label_precision_basis"]))
    prior_only = {lang for lang, value in basis.items() if value == PRIOR}
    checked = {lang for (lang, _source), rate in model.accuracy.items() if rate.evidence > POOL_STRENGTH}
    assert prior_only and checked  # the sample build has both kinds
    assert prior_only.isdisjoint(checked)
    assert {lang for lang, value in basis.items() if value == "estimated"} <= checked


def test_verdicts_teach_which_of_two_sources_is_wrong():
    """Two sources fix only the product of their accuracies; verdicts on some disagreements split it."""
    rows = simulated_rows("xxx_Latn", {"wikt": 0.95, "omw:a": 0.6}, 400, seed=5)
    classes = candidate_classes(rows)
    blind = fit(classes)
    gap = blind.accuracy[("xxx_Latn", "wikt")].value - blind.accuracy[("xxx_Latn", "omw:a")].value
    assert abs(gap) < 0.02  # symmetric without verdicts
    known = {}
    for votes in classes[:60]:
        for _source, label in votes.votes:
            known[("xxx_Latn", votes.class_idx, label)] = label.startswith("true")
    told = fit(classes, known=known)
    assert told.accuracy[("xxx_Latn", "wikt")].value > told.accuracy[("xxx_Latn", "omw:a")].value + 0.1
