"""What a chosen label's standing says of its chance of being right, and the logistic layer that weighs it
(issue 48): the inputs a judged label is scored on, computed from the labels stage's own tables.

`label_features` is the evidence the rules' p_correct (precision.py) leaves out: the source kind, the
number of senses, the form's shape and frequency, how it was ranked. `lexicon_features` adds the label's
standing among the class's candidates and the language's: synonyms other sources list, sources silent on
it, other classes it also names, the length of its source's list. The layer is an L2 logistic regression
on standardised columns; its weights are fitted on judged labels by benchmarks/label_precision.py, which
scores each choice held out by language, and written to resources/label_precision_weights.json, which the
labels stage reads when `labels.p_correct` is `lexicon`. With `labels.choose: lexicon` the same layer also
scores each class's later forms as if chosen (`choice_table`) and takes the one it prefers
(`preferred_labels`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from babelforge.babel_imagenet.precision import UNKNOWN_PRECISION, p_correct
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
    # dicts, not Series: 20,000 lookups by a (lang, wnid) key cost a second each way on a MultiIndex
    chosen = candidates[candidates["chosen"]].set_index(["lang", "wnid"])["zipf"].to_dict()
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
    "rules_logit_omw",
)


def lexicon_features(features: pd.DataFrame, labels: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """`features` (label_features' rows) with the lexicon evidence of each label added:

    * synonym_support: other sources listing the label among any of their forms for the class, not
      only as their first (candidates.parquet's `agreement`, less the label's own source; at most 2);
    * silent_sources: the class's other sources that do not list it;
    * label_polysemy: log(1 + the other classes of the language whose candidates include the label):
      a word that names several ImageNet things in the language (botol, bottle, for the plant pot);
    * source_forms: log of the forms the label's source gives for the class (a long list is a loose one);
    * rules_logit_omw: the rules' log-odds of a label an OMW wordnet gave, 0 for another source. The rules'
      figure ranks a wordnet's labels, whose precisions are moderate and differ by language, but hardly
      Wiktionary's, whose figures sit near 1 (held out by language, this input lifts the layer's AUC from
      0.744 to 0.760; benchmarks/label_precision.py --select checks that choice inside each fold).
    """
    import pandas as pd

    usable = candidates[candidates["set_aside"] != "dropped_placeholder"]
    keys = usable["label"].str.casefold()
    classes_with = (
        pd.DataFrame({"lang": usable["lang"], "key": keys, "wnid": usable["wnid"]})
        .drop_duplicates()
        .groupby(["lang", "key"])
        .size()
        .to_dict()
    )
    class_sources = usable.groupby(["lang", "wnid"])["source"].nunique().to_dict()
    source_forms = usable.groupby(["lang", "wnid", "source"]).size().to_dict()
    agreement = candidates[candidates["chosen"]].set_index(["lang", "wnid"])["agreement"].to_dict()
    label_source = labels.set_index(["lang", "wnid"])["source"].to_dict()
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
    out["rules_logit_omw"] = out["rules_logit"] * out["omw_source"]
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


# --- choosing between a class's candidates (issue 48 item 3, labels.choose: lexicon) ---------------------

# candidates.parquet's set_aside of a usable form ranked below the chosen label: what the layer may choose
# instead (a form set aside for any other reason is one the rules refuse, not one they ranked lower). A class
# the precision floor dropped has every form set aside as PRECISION_FLOOR, its choice and its later forms
# alike, so it offers no choice: read a table built before the floor (the stage) or without one (benchmarks).
LATER_FORM = "not_first"
CHOSEN = ""


def later_forms(candidates: pd.DataFrame) -> pd.DataFrame:
    """Each class's usable later forms, one row per distinct label (its first in rank order), leaving out
    the chosen label's own key, numbered per class in `turn` (0, 1, ...) in rank order."""
    rows = candidates[(candidates["lang"] != ENGLISH) & (candidates["set_aside"] == LATER_FORM)]
    rows = rows.assign(key=rows["label"].str.casefold()).drop_duplicates(["lang", "wnid", "key"])
    chosen = candidates[candidates["set_aside"] == CHOSEN]
    chosen_keys = set(zip(chosen["lang"], chosen["wnid"], chosen["label"].str.casefold()))
    rows = rows[[key not in chosen_keys for key in zip(rows["lang"], rows["wnid"], rows["key"])]]
    return rows.assign(turn=rows.groupby(["lang", "wnid"]).cumcount()).drop(columns="key")


def as_if_chosen(
    labels: pd.DataFrame, candidates: pd.DataFrame, forms: pd.DataFrame, precision: dict
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """labels and candidates as if each class of `forms` (later_forms' rows, one per class) had chosen that
    form: the rows the features read. Its rules figure is the rules' formula on the form's own evidence (its
    source's precision from `precision`, {(lang, source): p}; sources agreeing and silent; a duplicate of
    another class's label counted as a flag); the class's flags of the old label (an ambiguous English lemma
    with no support) are not carried over, since they were the old label's."""
    import pandas as pd

    where = list(zip(forms["lang"], forms["wnid"]))
    taken = labels["label"].str.casefold().groupby(labels["lang"]).agg(set).to_dict()
    choosable = candidates[candidates["set_aside"].isin((CHOSEN, LATER_FORM))]
    sources_of = choosable.groupby(["lang", "wnid"])["source"].nunique().to_dict()
    at = labels.set_index(["lang", "wnid"]).index.get_indexer(where)
    if (at < 0).any():  # iloc[-1] would silently take the last row
        raise ValueError("as_if_chosen: a form of a class that has no label row")
    changed = labels.iloc[at].copy()
    duplicate = [label.casefold() in taken.get(lang, ()) for lang, label in zip(forms["lang"], forms["label"])]
    changed["label"] = forms["label"].to_numpy()
    changed["source"] = forms["source"].to_numpy()
    changed["rank"] = forms["rank"].to_numpy()
    changed["n_sources"] = forms["agreement"].to_numpy()
    changed["is_duplicate"] = duplicate
    changed["ambiguous_source"] = False
    changed["rank_reason"] = LATER_FORM
    changed["p_rules"] = [
        p_correct(
            precision.get((lang, source), UNKNOWN_PRECISION),
            int(agreeing) - 1,
            max(sources_of.get((lang, wnid), 1) - int(agreeing), 0),
            int(dup) + int(low),
        )
        for lang, wnid, source, agreeing, dup, low in zip(
            forms["lang"], forms["wnid"], forms["source"], forms["agreement"], duplicate, changed["used_low_precision"]
        )
    ]
    rest = np.ones(len(labels), dtype=bool)
    rest[at] = False
    moved = candidates.copy()
    moved.loc[moved.set_index(["lang", "wnid"]).index.isin(where) & moved["chosen"], "chosen"] = False
    moved.loc[forms.index, "chosen"] = True
    return pd.concat([labels[rest], changed]), moved


def choice_table(labels: pd.DataFrame, candidates: pd.DataFrame, precision: dict) -> pd.DataFrame:
    """The layer's inputs (lexicon_features) of every non-English class's chosen label and of each of its
    later forms as if chosen (`later` True), one row each: the forms of one turn at a time, so every
    class in a pass keeps one chosen label, as the features expect."""
    import pandas as pd

    parts = [lexicon_features(label_features(labels, candidates), labels, candidates).assign(later=False)]
    forms = later_forms(candidates)
    labelled = set(zip(labels["lang"], labels["wnid"]))  # a reviewed-away or emptied class offers no choice
    forms = forms[[key in labelled for key in zip(forms["lang"], forms["wnid"])]]
    for turn in range(int(forms["turn"].max()) + 1 if len(forms) else 0):
        these = forms[forms["turn"] == turn]
        moved_labels, moved = as_if_chosen(labels, candidates, these, precision)
        keys = set(zip(these["lang"], these["wnid"]))
        # the turn's classes and the English reference rows (the label-length input) are all it reads
        in_turn = np.array([key in keys for key in zip(moved_labels["lang"], moved_labels["wnid"])], dtype=bool)
        wanted = (moved_labels["lang"] == ENGLISH).to_numpy() | in_turn
        moved_labels = moved_labels[wanted]
        table = lexicon_features(label_features(moved_labels, moved), moved_labels, moved)
        parts.append(table.assign(later=True))
    return pd.concat(parts, ignore_index=True)


def preferred_labels(table: pd.DataFrame, p: np.ndarray) -> dict[tuple[str, str], str]:
    """(lang, wnid) -> the later form to choose where the layer gives it a higher p than the chosen label
    (`table`: choice_table's rows, `p` the layer's figure of each). A form another class of the language
    keeps, or one two classes would both take, is not chosen: the rules resolved duplicates already."""
    scored = table.assign(p=p, key=table["label"].str.casefold())
    chosen = scored[~scored["later"]].set_index(["lang", "wnid"])
    later = scored[scored["later"] & (scored["duplicate"] == 0)]
    best = later.sort_values(["p", "label"], ascending=[False, True], kind="stable").drop_duplicates(["lang", "wnid"])
    better = best[best["p"].to_numpy() > chosen.loc[list(zip(best["lang"], best["wnid"])), "p"].to_numpy()]
    taken = better.groupby(["lang", "key"])["wnid"].transform("size")
    better = better[taken.to_numpy() == 1]
    return {(lang, wnid): label for lang, wnid, label in zip(better["lang"], better["wnid"], better["label"])}
