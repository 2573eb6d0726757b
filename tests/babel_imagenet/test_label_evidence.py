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
    label_features,
    layer_of,
    lexicon_features,
    lexicon_p_correct,
    read_layer,
)
from babelforge.babel_imagenet.labels_stage import WEIGHTS_FILE
from babelforge.core.errors import BabelforgeError
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
    x = np.random.default_rng(3).normal(size=(200, 2)) + 5.0  # inputs far from 0: standardising matters
    y = (x[:, 0] > 5.0).astype(float)
    layer = layer_of(fit_logistic(x, y), ("zipf", "length_ratio"))  # two of the layer's inputs
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"layer": {k: list(v) for k, v in vars(layer).items()}}))
    assert read_layer(path) == layer
    frame = pd.DataFrame({"zipf": [7.0, 3.0], "length_ratio": [5.0, 5.0]})
    high, low = layer.predict(frame)
    assert high > 0.9 > 0.1 > low  # the input the verdicts follow moves the figure
    for part in ("features", "mean", "scale", "weights"):
        broken = {"layer": {**{k: list(v) for k, v in vars(layer).items()}, part: list(getattr(layer, part)[:-1])}}
        path.write_text(json.dumps(broken))
        with pytest.raises(BabelforgeError, match="differ in length"):
            read_layer(path)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda layer: {**layer, "weights": [float("nan"), *layer["weights"][1:]]}, "must be finite numbers"),
        (lambda layer: {**layer, "scale": ["1", *layer["scale"][1:]]}, "must be finite numbers"),
        (lambda layer: {**layer, "mean": [*layer["mean"][:-1], float("inf")]}, "must be finite numbers"),
        (lambda layer: {**layer, "features": ["zipfs", *layer["features"][1:]]}, "zipfs is no input of the layer"),
        (lambda layer: {key: value for key, value in layer.items() if key != "mean"}, "not a lexicon layer's weights"),
    ],
    ids=["nan-weight", "text-scale", "infinite-mean", "unknown-input", "no-mean"],
)
def test_a_hand_edited_weights_file_stops_in_one_line(tmp_path, edit, said):
    layer = json.loads(resource(WEIGHTS_FILE).read_text(encoding="utf-8"))["layer"]
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"layer": edit(layer)}))  # json writes NaN as NaN, as a hand edit would
    with pytest.raises(BabelforgeError, match=said) as error:
        read_layer(path)
    assert "\n" not in str(error.value) and str(error.value).startswith(str(path))


def test_each_input_of_a_label_as_the_tables_give_it():
    labels, candidates = tables(other_sources=2, listing=1, own_forms=3)
    labels.loc[1, ["n_senses", "n_sources"]] = [1, 1]  # one English sense; its source alone chose it
    labels.loc[1, "p_rules"] = 1.0  # the rules' figure is the input (p_correct 0.8 is not), kept finite
    extra = {"lang": "deu_Latn", "p_correct": 0.5, "p_rules": 0.5, "is_duplicate": True, "ambiguous_source": True}
    labels = pd.concat(
        [
            labels,  # n2: no English row, no candidates; a later form, a source that dropped English
            pd.DataFrame([{**labels.iloc[1].to_dict(), **extra, "wnid": "n2", "label": "Hunde Haus", "rank": 1,
                           "n_senses": 3, "n_dropped_english": 1, "n_sources": 2, "rank_reason": "frequency"}]),
        ],
        ignore_index=True,
    )  # fmt: skip
    candidates.loc[candidates["chosen"], "agreement"] = 5  # more agreeing sources than the input counts
    table = lexicon_features(label_features(labels, candidates), labels, candidates).set_index("wnid")
    first, second = table.loc["n1"], table.loc["n2"]
    assert first["rules_logit"] == pytest.approx(np.log(0.999 / 0.001)) and second["rules_logit"] == pytest.approx(0.0)
    assert (first["omw_source"], first["multi_word"], second["multi_word"]) == (1.0, 0.0, 1.0)
    assert (first["log_senses"], second["log_senses"]) == (0.0, pytest.approx(np.log(3)))
    assert first["length_ratio"] == pytest.approx(np.log(4 / 3))  # against `dog`
    assert second["length_ratio"] == pytest.approx(abs(np.log(10 / 8)))  # no English name: 8 letters
    assert (first["duplicate"], second["duplicate"], second["ambiguous_source"]) == (0.0, 1.0, 1.0)
    assert (first["frequency_choice"], second["frequency_choice"]) == (0.0, 1.0)
    assert (first["zipf"], first["no_zipf"], second["zipf"], second["no_zipf"]) == (4.0, 0.0, 0.0, 1.0)
    assert (first["not_first_form"], second["not_first_form"]) == (0.0, 1.0)
    assert (first["dropped_english"], second["dropped_english"]) == (0.0, 1.0)
    assert (first["agreeing"], second["agreeing"]) == (0.0, 1.0)
    assert first["synonym_support"] == 2.0  # at most 2
    assert first["silent_sources"] == 0.0  # 3 sources, 5 agreeing: none silent
    assert first["source_forms"] == pytest.approx(np.log(3))
    # a label its class's candidates do not hold: no support, no silent source, one class, one form
    assert (second["synonym_support"], second["silent_sources"], second["label_polysemy"], second["source_forms"]) == (
        0.0, 0.0, 0.0, 0.0,
    )  # fmt: skip


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
