"""Label precision as a figure (builders/babel_imagenet/precision.py): p_correct, the language
estimate and its interval, the measured figure of a reviewed sample, the precision-coverage curve."""

from __future__ import annotations

import random

import pytest

from babelforge.babel_imagenet.forms import Form
from babelforge.babel_imagenet.label_choice import LabelChoice
from babelforge.babel_imagenet.labels_stage import Config, PrecisionFloor
from babelforge.babel_imagenet.precision import (
    AGREEMENT_ODDS,
    ESTIMATED,
    MEASURED,
    MIN_MEASURED,
    REFERENCE,
    Judgement,
    coverage_curve,
    estimate_language,
    headline_precision,
    jeffreys_interval,
    label_precisions,
    language_figures,
    measured_by_source,
    measured_language,
    p_correct,
    review_judgements,
    tradeoff_lines,
)
from babelforge.babel_imagenet.ranking import Candidate
from babelforge.babel_imagenet.trust import LearnedPriority, SourceTrust
from babelforge.core.errors import BabelforgeError


def test_p_correct_is_the_source_precision_without_other_evidence():
    assert p_correct(0.8, 0, 0, 0) == 0.8


def test_agreement_raises_and_silence_and_flags_lower_p_correct():
    base = p_correct(0.6, 0, 0, 0)
    assert p_correct(0.6, 1, 0, 0) > base > p_correct(0.6, 0, 1, 0)
    assert p_correct(0.6, 0, 0, 1) < base
    # the odds move by the documented factor
    odds = 0.6 / 0.4 * AGREEMENT_ODDS
    assert p_correct(0.6, 1, 0, 0) == pytest.approx(odds / (1 + odds), abs=1e-4)


def test_p_correct_stays_inside_zero_and_one():
    assert 0 < p_correct(0.0, 0, 5, 4) < p_correct(1.0, 3, 0, 0) < 1


def _choice(lang, synset, label, sources_by_candidate, n_sources, **kwargs):
    candidates = tuple(
        Candidate(Form(synset, lang, text, text, sources[0], False, 0), tuple(sources), False, ())
        for text, sources in sources_by_candidate
    )
    return LabelChoice(
        synset, lang, label, sources_by_candidate[0][1][0], 0, 2, 0, 0, 0, False,
        n_sources=n_sources, rank_reason="agreement", candidates=candidates, **kwargs,
    )  # fmt: skip


def test_label_precisions_weigh_agreement_silence_and_duplicates():
    trust = LearnedPriority(
        (SourceTrust("ind", "omw", 0, 10, 0, 0, 0.7, 0.6), SourceTrust("ind", "wikt", 8, 10, 0, 0, 0.9, 0.9)),
        {},
        {},
    )
    agreed = _choice("ind", "a.n.01", "angsa", [("angsa", ("omw", "wikt"))], 2)
    alone = _choice("ind", "b.n.01", "siput", [("siput", ("wikt",)), ("bekicot", ("omw",))], 1)
    single = _choice("ind", "c.n.01", "kop", [("kop", ("omw",))], 1)
    twin = _choice("ind", "d.n.01", "kop", [("kop", ("omw",))], 1)
    empty = LabelChoice("e.n.01", "ind", None, None, None, 0, 0, 0, 0, False)
    p = label_precisions([agreed, alone, single, twin, empty], trust)
    assert set(p) == {("ind", s) for s in ("a.n.01", "b.n.01", "c.n.01", "d.n.01")}
    assert p[("ind", "a.n.01")] == p_correct(0.6, 1, 0, 0)  # omw's precision, one agreeing source
    assert p[("ind", "b.n.01")] == p_correct(0.9, 0, 1, 0)  # omw covers the class but does not give it
    assert p[("ind", "c.n.01")] == p_correct(0.6, 0, 0, 1)  # `kop` names two classes: a duplicate
    assert label_precisions([single], trust)[("ind", "c.n.01")] == 0.6


def test_estimate_interval_holds_the_mean_and_narrows_with_evidence():
    values = [0.9] * 200
    sources = ["wikt"] * 200
    thin = estimate_language(values, sources, {"wikt": 20})
    thick = estimate_language(values, sources, {"wikt": 2000})
    assert thin.basis == ESTIMATED and thin.precision == 0.9
    assert thin.low < thick.low < 0.9 < thick.high < thin.high
    assert thin.expected_wrong == pytest.approx(20.0)


def test_estimate_interval_covers_simulated_languages():
    # labels drawn right with their p_correct: the 95 % interval holds the realised share most times
    generator = random.Random(3)
    covered = 0
    for _ in range(200):
        values = [generator.choice([0.55, 0.9, 0.99]) for _ in range(150)]
        realised = sum(generator.random() < p for p in values) / len(values)
        estimate = estimate_language(values, ["s"] * len(values), {})
        covered += estimate.low <= realised <= estimate.high
    assert covered >= 180


def test_jeffreys_interval_of_a_sample():
    mean, low, high = jeffreys_interval(47, 50)
    assert low < 47 / 50 < high and low > 0.8 and high < 1
    assert jeffreys_interval(0, 10)[1] < 0.01


def test_review_judgements_from_decisions():
    rows = [
        {"class_idx": 1, "reviewed": True, "review_stale": False, "label": "angsa", "rule_label": "angsa", "source": "wikt"},
        {"class_idx": 2, "reviewed": True, "review_stale": False, "label": "simpul", "rule_label": "ikatan",
         "source": "review:ann"},
        {"class_idx": 3, "reviewed": True, "review_stale": True, "label": "old", "rule_label": "new", "source": "wikt"},
        {"class_idx": 4, "reviewed": False, "review_stale": False, "label": "x", "rule_label": "x", "source": "wikt"},
        {"class_idx": 5, "reviewed": True, "review_stale": False, "label": "baru", "rule_label": None,
         "source": "review:ann"},
    ]  # fmt: skip
    judged = review_judgements(rows, [{"class_idx": 6}], {1: "wikt", 2: "omw", 6: "omw"})
    assert judged == [Judgement("wikt", True), Judgement("omw", False), Judgement("omw", False)]
    assert measured_by_source(judged)["omw"][:2] == (0, 2)


def test_measured_language_applies_the_sample_share_to_unreviewed_labels():
    judged = [Judgement("wikt", True)] * 30 + [Judgement("omw", False)] * 10
    estimate = measured_language(judged, n_labels=330, n_decided=39)
    share = jeffreys_interval(30, 40)[0]
    assert estimate.basis == MEASURED and estimate.judged == 40
    assert estimate.precision == pytest.approx((39 + 291 * share) / 330, abs=1e-4)
    assert estimate.low < estimate.precision < estimate.high
    assert "measured (40 reviewed)" in estimate.text()


def test_language_figures_turn_measured_with_enough_reviews():
    labels = [("deu", 0.9, "wikt", False)] * 90 + [("deu", 1.0, "review:ann", True)] * 10
    labels += [("eng", 1.0, "clip", False)] * 5
    few = language_figures(labels, {("deu", "wikt"): 40}, {"deu": [Judgement("wikt", True)] * 3}, ["eng"])
    assert few["deu"].shown.basis == ESTIMATED and few["eng"].shown.basis == REFERENCE
    many = language_figures(labels, {("deu", "wikt"): 40}, {"deu": [Judgement("wikt", True)] * MIN_MEASURED}, ["eng"])
    assert many["deu"].shown.basis == MEASURED and many["deu"].estimated.basis == ESTIMATED
    assert headline_precision(many)["measured_languages"] == 1


def test_coverage_curve_and_tradeoff():
    values = [0.3, 0.4, 0.8, 0.9]
    assert coverage_curve(values, [0.0, 0.5, 0.9]) == [(0.0, 4, 1.6), (0.5, 2, 0.3), (0.9, 1, 0.1)]
    lines = tradeoff_lines({"ind": values, "deu": [0.9, 0.95]}, {"ind": 0.5, "deu": 0.5})
    assert lines == ["ind 4->2 classes, expected wrong 1.6->0.3"]


def test_precision_floor_setting_per_language_and_its_checks():
    floor = PrecisionFloor(0.5, {"ind_Latn": 0.6})
    assert floor.of("ind_Latn") == 0.6 and floor.of("deu_Latn") == 0.5
    floor.check({"ind_Latn", "deu_Latn"})
    with pytest.raises(BabelforgeError, match="xx_Latn is not a registry key"):
        PrecisionFloor(0.5, {"xx_Latn": 0.6}).check({"ind_Latn"})
    with pytest.raises(BabelforgeError, match="above 1"):
        PrecisionFloor(1.5).check(set())
    assert Config.__dataclass_fields__["precision_floor"].default_factory().default == 0.5  # the sample default


def test_a_language_nothing_checked_says_its_figure_is_the_prior_only():
    from babelforge.babel_imagenet.precision import PRIOR
    from babelforge.babel_imagenet.trust import PRIOR_STRENGTH

    labels = [("afr", 0.89, "wikt", False)] * 80 + [("deu", 0.9, "wikt", False)] * 80
    weights = {("afr", "wikt"): PRIOR_STRENGTH, ("deu", "wikt"): PRIOR_STRENGTH + 40}
    figures = language_figures(labels, weights, {})
    assert figures["afr"].shown.basis == PRIOR and figures["deu"].shown.basis == ESTIMATED
    assert "prior only" in figures["afr"].shown.text() and "prior only" not in figures["deu"].shown.text()
    # the prior's evidence is less than the learned one's: a wider interval
    afr, deu = figures["afr"].shown, figures["deu"].shown
    assert afr.high - afr.low > deu.high - deu.low
    assert headline_precision(figures)["prior_only_languages"] == 1
