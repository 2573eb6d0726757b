"""Check label-quality figures on judged labels (issue 48): the rules' p_correct (issue 37) against
the learned latent-truth model (latent_truth.py), on the two judged sets.

Run from the repo root: `.venv/bin/python benchmarks/label_precision.py [--data data/babel_imagenet]
[--judged ../shared/judged/labels_judged_2026-11-25.tsv]`. Prints, for each figure, the reliability
table, Brier against one constant share, AUC of right vs wrong and the Spearman correlation of the
per-language figures with the judged shares, the learned accuracy of each source in the ten largest
languages, and the classes where the model and the rules choose different candidates, with which
one the judged sets find right; saves it all to benchmarks/results/label_precision.json.

Held out: the model never sees a judged label (it fits on candidates.parquet's agreement structure
only), so every judged label is held out from the fit. The constant of the Brier baseline is the
judged share right in the *other* languages (leave-one-language-out), so the baseline does not see
the labels it predicts either. A fourth figure is the model cross-validated as reviews would feed it:
5 folds of the judged classes, each predicted by a fit that knew the other folds' verdicts; and the
same grouped by language (each language predicted by a fit that knew only the other languages' verdicts).

A fifth figure is a calibration layer: an L2 logistic regression on the rules' p_correct (log-odds)
and evidence the rules ignore (source kind, the English name's sense count, a multi-word label,
the label's length against the English name, frequency, rank, a dropped English form, a duplicate,
agreement), fitted leave-one-language-out on the judged labels. The features and the ridge are
fixed in advance (FEATURES, RIDGE): choosing them on these 248 labels would score the choice on
the labels that made it. `--select` adds the honest price of choosing: a forward selection of the
features nested inside each outer fold (minutes).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from babelforge.babel_imagenet.latent_truth import NOT_A_LABEL, candidate_classes, fit, label_posterior
from babelforge.babel_imagenet.precision import (
    UNKNOWN_PRECISION,
    auc,
    brier_score,
    calibration_table,
    p_correct,
    spearman,
)

OWN_JUDGED = Path("tests/babel_imagenet/judged_labels.tsv")
# outcome -> (our label right, the release's label right)
OUTCOMES = {
    "ours_wrong": (False, True),
    "theirs_wrong": (True, False),
    "both_ok": (True, True),
    "both_wrong": (False, False),
}


def read_tsv(path: Path) -> list[dict]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def judged_candidates(own: list[dict], shared: list[dict]) -> dict[tuple[str, str, str], bool]:
    """(lang, wnid, label) -> judged right, from both sets (the shared set judges both labels of a pair)."""
    judged = {(r["lang"], r["wnid"], r["label"]): r["right"] == "1" for r in own}
    for row in shared:
        if row["outcome"] not in OUTCOMES:  # `variant`: two spellings/forms of one name, no verdict on either
            continue
        ours_right, theirs_right = OUTCOMES[row["outcome"]]
        wnid = row["id"].split(":", 1)[1]
        judged[(row["lang"], wnid, row["ours"])] = ours_right
        judged[(row["lang"], wnid, row["theirs"])] = theirs_right
    return judged


def leave_one_language_out_constant(pairs: list[tuple[str, float, bool]]) -> list[tuple[float, bool]]:
    """Each label's constant prediction: the share judged right among the other languages' labels."""
    right, total = defaultdict(int), defaultdict(int)
    for lang, _p, ok in pairs:
        right[lang] += ok
        total[lang] += 1
    all_right, all_total = sum(right.values()), sum(total.values())
    return [((all_right - right[lang]) / (all_total - total[lang]), ok) for lang, _p, ok in pairs]


def score(name: str, pairs: list[tuple[str, float, bool]]) -> dict:
    """The checks of one figure on (lang, p, judged right) triples."""
    judged = [(p, ok) for _, p, ok in pairs]
    constant = leave_one_language_out_constant(pairs)
    by_lang: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for lang, p, ok in pairs:
        by_lang[lang].append((p, ok))
    ranked = {lang: rows for lang, rows in by_lang.items() if len(rows) >= 5}
    estimated = [sum(p for p, _ in rows) / len(rows) for rows in ranked.values()]
    observed = [sum(ok for _, ok in rows) / len(rows) for rows in ranked.values()]
    brier, base = brier_score(judged), brier_score(constant)
    return {
        "figure": name,
        "labels": len(pairs),
        "share_right": round(sum(ok for _, ok in judged) / len(judged), 3),
        "mean_p": round(sum(p for p, _ in judged) / len(judged), 3),
        "reliability": calibration_table(judged),
        "brier": brier,
        "brier_constant": base,
        "brier_gain": round(1 - brier / base, 3),
        "auc": auc(judged),
        "spearman_languages": spearman(estimated, observed),
        "languages": {
            lang: (round(e, 3), round(o, 3), len(ranked[lang])) for lang, e, o in zip(ranked, estimated, observed)
        },
    }


def cross_validated(classes: list, chosen: list, idx_of: dict, judged: dict, folds: int = 5) -> list:
    """(lang, p, right) of each judged chosen label from a fit that knew the verdicts of the other
    folds' classes (as reviews would be known), never its own."""
    known_all = {(lang, idx_of[w], label): ok for (lang, w, label), ok in judged.items() if w in idx_of}
    class_keys = sorted({key[:2] for key in known_all})
    random.Random(0).shuffle(class_keys)
    pairs = []
    for fold in range(folds):
        held_out = set(class_keys[fold::folds])
        model = fit(classes, known={key: ok for key, ok in known_all.items() if key[:2] not in held_out})
        for lang, wnid, label, _p, source in chosen:
            if (lang, idx_of[wnid]) in held_out and (lang, wnid, label) in judged:
                p = label_posterior(model, lang, idx_of[wnid], label, source)
                pairs.append((lang, p, judged[(lang, wnid, label)]))
    return pairs


def cross_validated_by_language(classes: list, chosen: list, idx_of: dict, judged: dict) -> list:
    """(lang, p, right) of each judged chosen label from a fit that knew the verdicts of every other
    language, none of its own: the other languages' reviews teach each source kind's pooled accuracy."""
    known_all = {(lang, idx_of[w], label): ok for (lang, w, label), ok in judged.items() if w in idx_of}
    pairs = []
    for held_out in sorted({key[0] for key in known_all}):
        model = fit(classes, known={key: ok for key, ok in known_all.items() if key[0] != held_out})
        for lang, wnid, label, _p, source in chosen:
            if lang == held_out and (lang, wnid, label) in judged:
                p = label_posterior(model, lang, idx_of[wnid], label, source)
                pairs.append((lang, p, judged[(lang, wnid, label)]))
    return pairs


def compare_choices(model, chosen: list, idx_of: dict, judged: dict) -> dict:
    """Where the learned model's most likely label of a class differs from the rules' label: how
    many per language, and which the judged sets find right (classes with a verdict on both)."""
    best: dict[tuple[str, int], tuple[float, str]] = {}
    for (lang, idx, label), p in model.posterior.items():
        if (lang, idx) not in best or (p, label) > best[(lang, idx)]:
            best[(lang, idx)] = (p, label)
    changed: dict[str, int] = defaultdict(int)
    both = rules_right = learned_right = 0
    before, after = [0, 0], [0, 0]
    for lang, wnid, label, _p, _src in chosen:
        top = best.get((lang, idx_of[wnid]))
        learned_label = (
            label if top is None or top[0] <= model.posterior.get((lang, idx_of[wnid], label), 0) else top[1]
        )
        if (lang, wnid, label) in judged and (lang, wnid, learned_label) in judged:
            before[0] += judged[(lang, wnid, label)]
            before[1] += 1
            after[0] += judged[(lang, wnid, learned_label)]
            after[1] += 1
        if learned_label == label:
            continue
        changed[lang] += 1
        if (lang, wnid, label) in judged and (lang, wnid, learned_label) in judged:
            both += 1
            rules_right += judged[(lang, wnid, label)]
            learned_right += judged[(lang, wnid, learned_label)]
    return {
        "changed": sum(changed.values()),
        "changed_by_language": dict(sorted(changed.items(), key=lambda item: (-item[1], item[0]))),
        "judged_both": both,
        "rules_right": rules_right,
        "learned_right": learned_right,
        "before": f"{before[0]}/{before[1]}",
        "after": f"{after[0]}/{after[1]}",
    }


# The calibration layer's inputs, fixed before scoring (see the module doc).
FEATURES = (
    "rules_logit",
    "omw_source",
    "log_senses",
    "multi_word",
    "length_ratio",
    "duplicate",
    "ambiguous_source",
    "frequency_choice",
    "zipf",
    "no_zipf",
    "not_first_form",
    "dropped_english",
    "agreeing",
)
RIDGE = 1.0  # L2 penalty weight on the standardised coefficients (the intercept is free)


def label_features(labels: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """FEATURES of every non-English chosen label (lang, wnid, label, then one column each)."""
    english = labels[labels["lang"] == "eng_Latn"].set_index("wnid")["label"].str.len()
    rows = labels[(labels["lang"] != "eng_Latn") & labels["label"].map(lambda x: isinstance(x, str))]
    chosen = candidates[candidates["chosen"]].set_index(["lang", "wnid"])["zipf"]
    zipf = pd.Series([chosen.get((lang, w), np.nan) for lang, w in zip(rows["lang"], rows["wnid"])], index=rows.index)
    p = rows["p_correct"].clip(1e-3, 1 - 1e-3)
    return pd.DataFrame(
        {
            "lang": rows["lang"],
            "wnid": rows["wnid"],
            "label": rows["label"],
            "rules_logit": np.log(p / (1 - p)),
            "omw_source": rows["source"].str.startswith("omw").astype(float),
            "log_senses": np.log(rows["n_senses"].clip(lower=1)),
            "multi_word": rows["label"].str.contains(" ").astype(float),
            "length_ratio": np.log(rows["label"].str.len() / rows["wnid"].map(english).fillna(8)).abs(),
            "duplicate": rows["is_duplicate"].astype(float),
            "ambiguous_source": rows["ambiguous_source"].astype(float),
            "frequency_choice": rows["rank_reason"].isin(["frequency", "learned_priority", "unique"]).astype(float),
            "zipf": zipf.fillna(0.0),
            "no_zipf": zipf.isna().astype(float),
            "not_first_form": (rows["rank"] > 0).astype(float),
            "dropped_english": (rows["n_dropped_english"] > 0).astype(float),
            "agreeing": (rows["n_sources"] > 1).astype(float),
        }
    )


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, steps: int = 50) -> tuple:
    """(mean, scale, weights) of an L2 logistic regression by Newton steps on standardised columns."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.column_stack([np.ones(len(x)), (x - mean) / scale])
    w = np.zeros(z.shape[1])
    penalties = np.full(z.shape[1], ridge)
    penalties[0] = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-z @ w))
        gradient = z.T @ (p - y) + penalties * w
        hessian = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalties)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, w


def predict_logistic(model: tuple, x: np.ndarray) -> np.ndarray:
    mean, scale, w = model
    return 1 / (1 + np.exp(-(np.column_stack([np.ones(len(x)), (x - mean) / scale]) @ w)))


def leave_language_out(x: np.ndarray, y: np.ndarray, langs: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """Each label's prediction from a fit on the other languages' judged labels."""
    p = np.zeros(len(y))
    for lang in np.unique(langs):
        held = langs == lang
        p[held] = predict_logistic(fit_logistic(x[~held], y[~held], ridge), x[held])
    return p


def inner_brier(table: pd.DataFrame, y: np.ndarray, langs: np.ndarray, columns: list[str]) -> float:
    """Brier of the leave-one-language-out predictions from these columns."""
    return float(np.mean((leave_language_out(table[columns].to_numpy(), y, langs) - y) ** 2))


def nested_selection(table: pd.DataFrame, y: np.ndarray, langs: np.ndarray) -> tuple[np.ndarray, dict]:
    """Leave-one-language-out predictions where each outer fold chooses its features by forward
    selection on an inner leave-one-language-out Brier, starting from rules_logit."""
    p = np.zeros(len(y))
    chosen_by_fold = {}
    for lang in np.unique(langs):
        train = langs != lang
        xt, yt, lt = table[train].reset_index(drop=True), y[train], langs[train]
        chosen = ["rules_logit"]

        best = inner_brier(xt, yt, lt, chosen)
        while len(chosen) < len(FEATURES):
            b, feature = min((inner_brier(xt, yt, lt, [*chosen, f]), f) for f in FEATURES if f not in chosen)
            if b >= best:
                break
            best, chosen = b, [*chosen, feature]
        model = fit_logistic(xt[chosen].to_numpy(), yt)
        p[~train] = predict_logistic(model, table.loc[~train, chosen].to_numpy())
        chosen_by_fold[lang] = chosen
    return p, chosen_by_fold


def print_score(result: dict) -> None:
    print(f"\n== {result['figure']}: {result['labels']} judged labels, {100 * result['share_right']:.1f} % right, ")
    print(f"   mean p {result['mean_p']:.3f}")
    print("   p_correct bin   labels  predicted  judged right")
    for low, high, n, predicted, observed in result["reliability"]:
        print(f"   [{low:.2f}, {high:.2f})   {n:6d}  {predicted:9.3f}  {observed:12.3f}")
    print(
        f"   Brier {result['brier']:.4f} vs constant {result['brier_constant']:.4f} "
        f"({100 * result['brier_gain']:.1f} % lower); AUC {result['auc']:.3f}; "
        f"Spearman over {len(result['languages'])} languages {result['spearman_languages']:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--data", default="data/babel_imagenet")
    parser.add_argument("--judged", default="../shared/judged/labels_judged_2026-11-25.tsv")
    parser.add_argument("--out", default="benchmarks/results/label_precision.json")
    parser.add_argument("--select", action="store_true", help="also score a nested forward feature selection")
    args = parser.parse_args()
    data = Path(args.data)
    candidates = pd.read_parquet(data / "candidates.parquet")
    labels = pd.read_parquet(data / "labels.parquet")
    judged = judged_candidates(read_tsv(OWN_JUDGED), read_tsv(Path(args.judged)))

    start = time.perf_counter()
    items = candidate_classes(candidates.to_dict("records"), skip_langs=["eng_Latn"])
    model = fit(items)
    seconds = round(time.perf_counter() - start, 1)
    print(f"model: {len(items)} classes, {model.iterations} EM iterations, {seconds} s")
    wnid_of = dict(zip(candidates["class_idx"], candidates["wnid"]))
    idx_of = {wnid: idx for idx, wnid in wnid_of.items()}

    def learned_p(lang: str, wnid: str, label: str, source: str) -> float:
        return label_posterior(model, lang, idx_of[wnid], label, source)

    # the labels the build chose (what p_correct and the figure are about)
    chosen = list(zip(labels["lang"], labels["wnid"], labels["label"], labels["p_correct"], labels["source"]))
    chosen = [row for row in chosen if isinstance(row[2], str) and row[0] != "eng_Latn"]
    rules_pairs = [
        (lang, float(p), judged[(lang, w, lab)]) for lang, w, lab, p, _ in chosen if (lang, w, lab) in judged
    ]
    learned_pairs = [
        (lang, learned_p(lang, w, lab, src), judged[(lang, w, lab)])
        for lang, w, lab, _, src in chosen
        if (lang, w, lab) in judged
    ]
    # the rules' formula with the learned accuracy as each label's base (in place of trust.py's)
    kept = candidates[~candidates["set_aside"].isin(NOT_A_LABEL)]
    class_sources = kept.groupby(["lang", "wnid"])["source"].nunique().to_dict()
    flags = labels[["ambiguous_source", "is_duplicate", "used_low_precision"]].sum(axis=1) + (
        labels["rank_reason"] == "mixed_script"
    )
    evidence = {
        (lang, w): (int(n) - 1, max(class_sources.get((lang, w), 1) - int(n), 0), int(f))
        for lang, w, n, f in zip(labels["lang"], labels["wnid"], labels["n_sources"], flags)
    }

    def hybrid_p(lang: str, wnid: str, source: str) -> float:
        rate = model.accuracy.get((lang, source))
        agreeing, silent, n_flags = evidence[(lang, wnid)]
        return p_correct(rate.value if rate else UNKNOWN_PRECISION, max(agreeing, 0), silent, n_flags)

    hybrid_pairs = [
        (lang, hybrid_p(lang, w, src), judged[(lang, w, lab)])
        for lang, w, lab, _, src in chosen
        if (lang, w, lab) in judged
    ]
    features = label_features(labels, candidates)
    features = features[[(k in judged) for k in zip(features["lang"], features["wnid"], features["label"])]]
    features = features.reset_index(drop=True)
    truth = np.array([judged[k] for k in zip(features["lang"], features["wnid"], features["label"])], dtype=float)
    langs = features["lang"].to_numpy()
    calibrated = leave_language_out(features[list(FEATURES)].to_numpy(), truth, langs)
    results = [
        score("rules p_correct (issue 37)", rules_pairs),
        score("learned (latent truth)", learned_pairs),
        score("rules' formula on learned accuracies", hybrid_pairs),
        score("learned, 5-fold CV, other folds' verdicts known", cross_validated(items, chosen, idx_of, judged)),
        score(
            "learned, leave-one-language-out, other languages' verdicts known",
            cross_validated_by_language(items, chosen, idx_of, judged),
        ),
        score(
            "calibration layer, fixed features, leave-one-language-out",
            [(lang, float(p), bool(ok)) for lang, p, ok in zip(langs, calibrated, truth)],
        ),
    ]
    for ridge in (0.3, 3.0, 10.0):  # how much the fixed ridge matters (reported, not chosen)
        varied = leave_language_out(features[list(FEATURES)].to_numpy(), truth, langs, ridge)
        results.append(
            score(
                f"calibration layer, ridge {ridge}",
                [(lang, float(p), bool(ok)) for lang, p, ok in zip(langs, varied, truth)],
            )
        )
    selected_by_fold = {}
    if args.select:
        selected, selected_by_fold = nested_selection(features, truth, langs)
        results.append(
            score(
                "calibration layer, features chosen inside each fold",
                [(lang, float(p), bool(ok)) for lang, p, ok in zip(langs, selected, truth)],
            )
        )
    whole = fit_logistic(features[list(FEATURES)].to_numpy(), truth)
    weights = {name: round(float(w), 3) for name, w in zip(("intercept", *FEATURES), whole[2])}
    for result in results:
        print_score(result)
    print(
        "\n   calibration layer on all judged labels, standardised weights: "
        + ", ".join(f"{name} {w:+.2f}" for name, w in weights.items())
    )
    for lang, columns in selected_by_fold.items():
        print(f"   fold {lang}: {', '.join(columns)}")

    sizes = labels.groupby("lang").size().drop("eng_Latn", errors="ignore").sort_values(ascending=False)
    accuracies = {}
    print("\n== learned accuracy (precision of its first forms) per source, ten largest languages")
    for lang in sizes.index[:10]:
        rates = {
            source: (rate.value, rate.evidence)
            for (where, source), rate in sorted(model.accuracy.items())
            if where == lang
        }
        accuracies[lang] = rates
        cells = ", ".join(f"{s} {100 * v:.1f} % (evidence {e:.0f})" for s, (v, e) in rates.items())
        print(f"   {lang} ({sizes[lang]} labels): {cells}")

    choices = compare_choices(model, chosen, idx_of, judged)
    print(
        f"\n== item 3: classes where the learned model's top label differs from the rules' label: {choices['changed']}"
    )
    print("   per language: " + ", ".join(f"{lang} {n}" for lang, n in choices["changed_by_language"].items()))
    print(
        f"   judged on both labels: {choices['judged_both']} classes; rules right {choices['rules_right']}, "
        f"learned right {choices['learned_right']}"
    )
    print(
        f"   judged labels right, chosen by the rules: {choices['before']}; "
        f"chosen by the learned model: {choices['after']} (classes judged on the label each chooses)"
    )

    report = {
        "seconds": seconds,
        "choices": choices,
        "items": len(items),
        "iterations": model.iterations,
        "checks": results,
    }
    report["accuracies"] = accuracies
    report["calibration_weights"] = weights
    report["selected_by_fold"] = selected_by_fold
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nsaved {args.out}")


if __name__ == "__main__":
    main()
