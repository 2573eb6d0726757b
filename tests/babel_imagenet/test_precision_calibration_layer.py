"""The calibration layer of benchmarks/label_precision.py (issue 48): its logistic regression
recovers what simulated verdicts were drawn from, and a language's labels are never scored by a
fit that saw them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import label_precision  # noqa: E402


def simulated(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Verdicts drawn from a known logistic model of two standard-normal inputs, in six languages."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    truth = 1 / (1 + np.exp(-(1.5 + 2.0 * x[:, 0] - 1.0 * x[:, 1])))
    y = (rng.random(n) < truth).astype(float)
    langs = np.array([f"l{i % 6}" for i in range(n)])
    return x, y, langs


def test_logistic_recovers_the_coefficients_verdicts_were_drawn_from():
    x, y, _ = simulated(20_000, seed=1)
    mean, scale, w = label_precision.fit_logistic(x, y, ridge=0.01)
    raw = w[1:] / scale  # back from standardised columns
    intercept = w[0] - (raw * mean).sum()
    assert np.allclose([intercept, *raw], [1.5, 2.0, -1.0], atol=0.1)


def test_a_larger_ridge_pulls_the_weights_toward_zero():
    x, y, _ = simulated(300, seed=2)
    loose = label_precision.fit_logistic(x, y, ridge=0.01)[2][1:]
    tight = label_precision.fit_logistic(x, y, ridge=100.0)[2][1:]
    assert np.all(np.abs(tight) < np.abs(loose))


def test_a_languages_predictions_do_not_depend_on_its_own_verdicts():
    x, y, langs = simulated(600, seed=3)
    before = label_precision.leave_language_out(x, y, langs)
    flipped = y.copy()
    flipped[langs == "l0"] = 1 - flipped[langs == "l0"]
    after = label_precision.leave_language_out(x, flipped, langs)
    assert np.allclose(before[langs == "l0"], after[langs == "l0"])
    assert not np.allclose(before[langs != "l0"], after[langs != "l0"])  # the others did see l0's


def test_the_features_are_the_fixed_ones_and_read_a_labels_evidence():
    import pandas as pd

    labels = pd.DataFrame(
        {
            "lang": ["eng_Latn", "fra_Latn", "fra_Latn"],
            "wnid": ["n1", "n1", "n2"],
            "label": ["dog", "chien de garde", "chat"],
            "source": ["reference", "omw:fra", "wikt"],
            "p_correct": [1.0, 0.5, 0.9],
            "n_senses": [1, 4, 1],
            "is_duplicate": [False, True, False],
            "ambiguous_source": [False, False, True],
            "rank_reason": ["only", "frequency", "only"],
            "rank": [0, 2, 0],
            "n_dropped_english": [0, 1, 0],
            "n_sources": [1, 1, 2],
        }
    )
    candidates = pd.DataFrame(
        {"lang": ["fra_Latn", "fra_Latn"], "wnid": ["n1", "n2"], "chosen": [True, True], "zipf": [np.nan, 4.2]}
    )
    table = label_precision.label_features(labels, candidates).set_index("label")
    assert set(label_precision.FEATURES) <= set(table.columns)
    guard, cat = table.loc["chien de garde"], table.loc["chat"]
    assert (guard["omw_source"], cat["omw_source"]) == (1.0, 0.0)
    assert (guard["multi_word"], guard["duplicate"], guard["frequency_choice"], guard["not_first_form"]) == (1, 1, 1, 1)
    assert (guard["no_zipf"], cat["no_zipf"], cat["zipf"]) == (1.0, 0.0, 4.2)
    assert guard["rules_logit"] == 0.0 and cat["rules_logit"] > 2
    assert np.isclose(guard["length_ratio"], abs(np.log(14 / 3)))
    assert (cat["agreeing"], cat["ambiguous_source"], guard["dropped_english"]) == (1.0, 1.0, 1.0)


def test_nested_ridge_never_scores_a_language_with_its_own_verdicts():
    x, y, langs = simulated(600, seed=4)
    before, _ = label_precision.nested_ridge(x, y, langs)
    flipped = y.copy()
    flipped[langs == "l2"] = 1 - flipped[langs == "l2"]
    after, _ = label_precision.nested_ridge(x, flipped, langs)
    assert np.allclose(before[langs == "l2"], after[langs == "l2"])
    assert not np.allclose(before[langs != "l2"], after[langs != "l2"])


def test_nested_ridge_chooses_the_strongest_ridge_for_inputs_that_carry_nothing():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(240, 8))  # eight noise columns, verdicts independent of them
    y = (rng.random(240) < 0.85).astype(float)
    langs = np.array([f"l{i % 6}" for i in range(240)])
    _, chosen = label_precision.nested_ridge(x, y, langs)
    assert set(chosen) == {f"l{i}" for i in range(6)}
    assert sorted(chosen.values()).count(max(label_precision.RIDGES)) >= 5
    x_signal, y_signal, _ = simulated(240, seed=6)
    _, chosen_signal = label_precision.nested_ridge(x_signal, y_signal, langs)
    assert min(chosen_signal.values()) < max(label_precision.RIDGES)  # real signal: a looser fit wins somewhere


def test_lexicon_features_read_synonyms_polysemy_and_source_lists():
    import pandas as pd

    candidates = pd.DataFrame(
        {
            "lang": ["fra_Latn"] * 9,
            "wnid": ["n1", "n1", "n1", "n1", "n2", "n3", "n4", "n4", "n4"],
            "label": ["Chat", "chat", "minou", "matou", "chat", "chien", "lion", "lionne", "fauve"],
            "source": ["wikt", "omw:fra", "omw:fra", "omw:fra", "wikt", "wikt", "omw:fra", "omw:fra", "wikt"],
            "chosen": [True, False, False, False, True, True, True, False, False],
            "set_aside": ["", "same_label", "not_first", "not_first", "", "", "", "not_first", "not_first"],
            "agreement": [2, 2, 1, 1, 1, 1, 1, 1, 1],
        }
    )
    labels = pd.DataFrame(
        {
            "lang": ["fra_Latn"] * 4,
            "wnid": ["n1", "n2", "n3", "n4"],
            "label": ["Chat", "chat", "chien", "lion"],
            "source": ["wikt", "wikt", "wikt", "omw:fra"],
        }
    )
    features = labels[["lang", "wnid", "label"]].assign(rules_logit=[2.0, 1.5, 0.5, -1.0], omw_source=[0.0, 0, 0, 1])
    table = label_precision.lexicon_features(features, labels, candidates).set_index("wnid")
    # n1: omw:fra lists the label (as its second form), so it supports it; no source is silent
    assert (table.loc["n1", "synonym_support"], table.loc["n1", "silent_sources"]) == (1.0, 0.0)
    # n2: one source, nobody else; "chat" is a candidate of one other class (n1): polysemy log 2
    assert (table.loc["n2", "synonym_support"], table.loc["n2", "silent_sources"]) == (0.0, 0.0)
    assert np.isclose(table.loc["n2", "label_polysemy"], np.log(2))
    assert np.isclose(table.loc["n1", "label_polysemy"], np.log(2)) and table.loc["n3", "label_polysemy"] == 0.0
    # n4: wikt lists another word only (silent), omw:fra gives two forms
    assert (table.loc["n4", "synonym_support"], table.loc["n4", "silent_sources"]) == (0.0, 1.0)
    assert np.isclose(table.loc["n4", "source_forms"], np.log(2))
    assert (table.loc[["n1", "n2", "n3"], "source_forms"] == 0.0).all()  # wikt: one form each
    # the rules' log-odds count a second time for the wordnet's label only
    assert table["rules_logit_omw"].to_dict() == {"n1": 0.0, "n2": 0.0, "n3": 0.0, "n4": -1.0}
    assert set(label_precision.LEXICON_FEATURES) <= set(table.columns) | set(label_precision.FEATURES)


def test_the_constant_and_the_scores_hold_each_language_out():
    pairs = [("a", 0.9, True), ("a", 0.8, True), ("b", 0.2, False), ("b", 0.7, True), ("c", 0.6, False)]
    constant = label_precision.leave_one_language_out_constant(pairs)
    # a's labels get the share right among b and c (1 of 3), b's among a and c (2 of 3), c's among a and b (3 of 4)
    assert [round(p, 3) for p, _ in constant] == [0.333, 0.333, 0.667, 0.667, 0.75]
    scored = label_precision.score("toy", pairs + [("a", 0.9, True)] * 3 + [("b", 0.4, False)] * 3)
    assert scored["labels"] == 11 and scored["languages"].keys() == {"a", "b"}  # c has under 5 labels
    assert scored["languages"]["a"] == (0.88, 1.0, 5)
    assert scored["brier"] < scored["brier_constant"] and scored["auc"] > 0.9
    rows = pairs + [("a", 0.9, True)] * 3 + [("b", 0.4, False)] * 3
    part = np.array(["picked", "blind"] * 5 + ["blind"])
    parts = label_precision.score_parts(
        "toy",
        np.array([lang for lang, _, _ in rows]),
        np.array([p for _, p, _ in rows]),
        np.array([float(ok) for _, _, ok in rows]),
        part,
    )
    assert [(r["set"], r["labels"]) for r in parts] == [("picked", 5), ("blind", 6), ("all", 11)]
    assert parts[-1]["brier"] == scored["brier"]


def test_judged_candidates_read_both_labels_of_a_judged_pair_and_skip_variants():
    own = [{"lang": "deu_Latn", "wnid": "n1", "label": "Hund", "right": "1"}]
    own.append({"lang": "deu_Latn", "wnid": "n2", "label": "Robot", "right": "0"})
    shared = [
        {"lang": "fra_Latn", "id": "fra_Latn:n3", "ours": "chat", "theirs": "chatte", "outcome": "ours_wrong"},
        {"lang": "fra_Latn", "id": "fra_Latn:n4", "ours": "haltère", "theirs": "barre", "outcome": "theirs_wrong"},
        {"lang": "fra_Latn", "id": "fra_Latn:n5", "ours": "ballon", "theirs": "balle", "outcome": "variant"},
    ]
    judged = label_precision.judged_candidates(own, shared)
    assert judged == {
        ("deu_Latn", "n1", "Hund"): True,
        ("deu_Latn", "n2", "Robot"): False,
        ("fra_Latn", "n3", "chat"): False,
        ("fra_Latn", "n3", "chatte"): True,
        ("fra_Latn", "n4", "haltère"): True,
        ("fra_Latn", "n4", "barre"): False,
    }
