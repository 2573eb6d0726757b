"""The lexicon layer (issue 48) as the labels stage uses it: the committed weights file reads back as
the layer it holds, and on hand-made candidates it weighs a label's standing the way its fit on judged
labels says (another source listing the label raises it; sources silent on it, and a long list from its
own source, lower it)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from babelforge.babel_imagenet.label_evidence import (
    LEXICON_FEATURES,
    LexiconLayer,
    fit_logistic,
    layer_of,
    lexicon_p_correct,
    read_layer,
)
from babelforge.babel_imagenet.labels_stage import WEIGHTS_FILE
from babelforge.core.resources import resource


def committed() -> LexiconLayer:
    return read_layer(resource(WEIGHTS_FILE))


def test_the_committed_layer_weighs_every_lexicon_input_and_states_its_held_out_figures():
    layer = committed()
    assert layer.features == LEXICON_FEATURES
    assert len(layer.weights) == len(layer.features) + 1 == len(layer.mean) + 1 == len(layer.scale) + 1
    data = json.loads(resource(WEIGHTS_FILE).read_text(encoding="utf-8"))
    blind = data["held_out_by_language"]["blind"]
    rows = (Path(__file__).parent / "judged_labels_blind.tsv").read_text(encoding="utf-8").splitlines()
    assert blind["labels"] == len([line for line in rows if not line.startswith("#")]) - 1  # every blind label
    assert blind["brier_gain"] >= 0.10  # what the setting's help and the docs claim for it


def test_a_layer_reads_back_as_written_and_a_short_weights_list_is_refused(tmp_path):
    x = np.random.default_rng(3).normal(size=(200, 2))
    y = (x[:, 0] > 0).astype(float)
    layer = layer_of(fit_logistic(x, y), ("a", "b"))
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"layer": {k: list(v) for k, v in vars(layer).items()}}))
    assert read_layer(path) == layer
    frame = pd.DataFrame({"a": [2.0, -2.0], "b": [0.0, 0.0]})
    high, low = layer.predict(frame)
    assert high > 0.9 > 0.1 > low  # the input the verdicts follow moves the figure
    broken = {"layer": {**{k: list(v) for k, v in vars(layer).items()}, "weights": list(layer.weights[:-1])}}
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="differ in length"):
        read_layer(path)


def tables(other_sources: int, listing: int, own_forms: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One German class (`n1`) labelled `Hund` by omw:deu, with `other_sources` further sources of which
    `listing` list `Hund` too, `own_forms` forms from omw:deu; English `dog` as the reference row."""
    label = {"n_senses": 2, "is_duplicate": False, "ambiguous_source": False, "rank_reason": "agreement"}
    labels = pd.DataFrame(
        [
            {"lang": "eng_Latn", "wnid": "n1", "label": "dog", "p_correct": 1.0, "p_rules": 1.0, "source": "wn",
             "rank": 0, "n_dropped_english": 0, "n_sources": 1, **label},
            {"lang": "deu_Latn", "wnid": "n1", "label": "Hund", "p_correct": 0.8, "p_rules": 0.8, "source": "omw:deu",
             "rank": 0, "n_dropped_english": 0, "n_sources": 1 + listing, **label},
        ]
    )  # fmt: skip
    rows = [("omw:deu", "Hund", True)] + [("omw:deu", f"Form{i}", False) for i in range(own_forms - 1)]
    rows += [(f"s{i}", "Hund" if i < listing else f"Wort{i}", False) for i in range(other_sources)]
    candidates = pd.DataFrame(
        {
            "lang": "deu_Latn",
            "wnid": "n1",
            "source": [source for source, _, _ in rows],
            "label": [form for _, form, _ in rows],
            "chosen": [chosen for _, _, chosen in rows],
            "zipf": 4.0,
            "set_aside": "",
            "agreement": [1 + listing if chosen else 1 for _, _, chosen in rows],
        }
    )
    return labels, candidates


def p_of(other_sources: int, listing: int, own_forms: int = 1) -> float:
    labels, candidates = tables(other_sources, listing, own_forms)
    figure = lexicon_p_correct(labels, candidates, committed())
    assert list(figure) == [("deu_Latn", "n1")]  # the English reference is not estimated
    return figure[("deu_Latn", "n1")]


def test_the_committed_layer_weighs_a_labels_standing_among_its_class_candidates():
    alone = p_of(other_sources=0, listing=0)
    assert 0 < alone < 1
    assert p_of(other_sources=2, listing=2) > p_of(other_sources=2, listing=1) > p_of(other_sources=2, listing=0)
    assert p_of(other_sources=2, listing=0) < alone  # two sources silent on it
    assert p_of(other_sources=0, listing=0, own_forms=6) < alone  # its source lists six forms for the class
