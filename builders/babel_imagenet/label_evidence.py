"""What a chosen label's standing says of its chance of being right, and the logistic layer that weighs it
(issue 48): the inputs a judged label is scored on, computed from the labels stage's own tables.

`label_features` is the evidence the rules' p_correct (precision.py) leaves out: the source kind, the
number of senses, the form's shape and frequency, how it was ranked. `lexicon_features` adds the label's
standing among the class's candidates and the language's: synonyms other sources list, sources silent on
it, other classes it also names, the length of its source's list. The layer is an L2 logistic regression
on standardised columns; its weights are fitted on judged labels by benchmarks/label_precision.py, which
scores each choice held out by language, and written to resources/label_precision_weights.json, which the
labels stage reads when `labels.p_correct` is `lexicon`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import ENGLISH

if TYPE_CHECKING:
    import pandas as pd

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
    import pandas as pd

    english = labels[labels["lang"] == ENGLISH].set_index("wnid")["label"].str.len()
    rows = labels[(labels["lang"] != ENGLISH) & labels["label"].map(lambda x: isinstance(x, str))]
    chosen = candidates[candidates["chosen"]].set_index(["lang", "wnid"])["zipf"]
    zipf = pd.Series([chosen.get((lang, w), np.nan) for lang, w in zip(rows["lang"], rows["wnid"])], index=rows.index)
    # the rules' figure (a build before the lexicon layer has only p_correct, which was it)
    p = rows["p_rules" if "p_rules" in rows else "p_correct"].clip(1e-3, 1 - 1e-3)
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


# The lexicon layer's inputs (issue 48's second round), fixed before scoring like FEATURES: the rules'
# log-odds and the evidence of FEATURES the first layer weighed most, plus what the candidates say of
# the label's standing in its language's lexicon.
LEXICON_FEATURES = (
    "rules_logit",
    "omw_source",
    "synonym_support",
    "silent_sources",
    "label_polysemy",
    "duplicate",
    "not_first_form",
    "source_forms",
    "log_senses",
    "multi_word",
    "length_ratio",
    "zipf",
    "no_zipf",
)


def lexicon_features(features: pd.DataFrame, labels: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """`features` (label_features' rows) with the lexicon evidence of each label added:

    * synonym_support: other sources listing the label among any of their forms for the class, not
      only as their first (candidates.parquet's `agreement`, less the label's own source; at most 2);
    * silent_sources: the class's other sources that do not list it;
    * label_polysemy: log(1 + the other classes of the language whose candidates include the label):
      a word that names several ImageNet things in the language (botol, bottle, for the plant pot);
    * source_forms: log of the forms the label's source gives for the class (a long list is a loose one).
    """
    import pandas as pd

    usable = candidates[candidates["set_aside"] != "dropped_placeholder"]
    keys = usable["label"].str.casefold()
    classes_with = (
        pd.DataFrame({"lang": usable["lang"], "key": keys, "wnid": usable["wnid"]})
        .drop_duplicates()
        .groupby(["lang", "key"])
        .size()
    )
    class_sources = usable.groupby(["lang", "wnid"])["source"].nunique()
    source_forms = usable.groupby(["lang", "wnid", "source"]).size()
    agreement = candidates[candidates["chosen"]].set_index(["lang", "wnid"])["agreement"]
    label_source = labels.set_index(["lang", "wnid"])["source"]
    where = list(zip(features["lang"], features["wnid"]))
    agreeing = np.array([agreement.get(key, 1) for key in where])
    out = features.copy()
    out["synonym_support"] = np.minimum(agreeing - 1, 2).astype(float)
    out["silent_sources"] = [float(max(class_sources.get(key, 1) - n, 0)) for key, n in zip(where, agreeing)]
    out["label_polysemy"] = [
        float(np.log1p(max(classes_with.get((lang, label.casefold()), 1) - 1, 0)))
        for lang, label in zip(features["lang"], features["label"])
    ]
    out["source_forms"] = [float(np.log(source_forms.get((*key, label_source.get(key)), 1))) for key in where]
    return out


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


@dataclass(frozen=True)
class LexiconLayer:
    """A fitted layer: its inputs' names, their means and scales, and the weights (intercept first)."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    weights: tuple[float, ...]

    def predict(self, table: pd.DataFrame) -> np.ndarray:
        model = (np.array(self.mean), np.array(self.scale), np.array(self.weights))
        return predict_logistic(model, table[list(self.features)].to_numpy(dtype=float))


def layer_of(model: tuple, features: tuple[str, ...]) -> LexiconLayer:
    """A `fit_logistic` result as a LexiconLayer, rounded to what its JSON keeps (9 significant digits)."""
    mean, scale, weights = (tuple(float(f"{float(v):.9g}") for v in part) for part in model)
    return LexiconLayer(tuple(features), mean, scale, weights)


def read_layer(path: Path) -> LexiconLayer:
    """The layer a weights file holds (written by `benchmarks/label_precision.py --write-weights`); a file
    edited by hand stops with one line: a NaN weight would give every label a NaN p_correct, which no
    floor drops, and an input the layer does not know would fail deep in pandas."""
    try:
        layer = json.loads(Path(path).read_text(encoding="utf-8"))["layer"]
        parts = [tuple(layer[key]) for key in ("features", "mean", "scale", "weights")]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BabelforgeError(f"{path}: not a lexicon layer's weights file ({error}); write it again") from None
    if not len(parts[0]) == len(parts[1]) == len(parts[2]) == len(parts[3]) - 1:
        raise BabelforgeError(f"{path}: features, mean, scale and weights (intercept first) differ in length")
    if unknown := [name for name in parts[0] if name not in LEXICON_FEATURES]:
        raise BabelforgeError(
            f"{path}: {', '.join(map(str, unknown))} is no input of the layer ({', '.join(LEXICON_FEATURES)})"
        )
    numbers = [*parts[1], *parts[2], *parts[3]]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in numbers):
        raise BabelforgeError(f"{path}: mean, scale and weights must be finite numbers")
    return LexiconLayer(*parts)


def lexicon_p_correct(labels: pd.DataFrame, candidates: pd.DataFrame, layer: LexiconLayer) -> dict:
    """(lang, wnid) -> p_correct of every non-English chosen label, from the layer on its evidence;
    `labels` carries the rules' p_correct (the layer's first input) and the English reference rows."""
    table = lexicon_features(label_features(labels, candidates), labels, candidates)
    return dict(zip(zip(table["lang"], table["wnid"]), (float(p) for p in layer.predict(table))))
