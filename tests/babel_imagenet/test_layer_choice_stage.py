"""labels.choose: lexicon (issue 48 item 3) in the labels stage, on the sample chain built from the real OMW
mirror (the pure parts: test_layer_choice.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from babelforge.babel_imagenet.label_choice import LEXICON_CHOICE
from babelforge.babel_imagenet.precision import UNKNOWN_PRECISION, p_correct
from tests.babel_imagenet.conftest import run_labels


def test_the_stage_lets_the_layer_choose_and_says_how_many_per_language(sample_chain, tmp_path, capsys):
    """On the sample chain: every label the layer chose was a later form of its class in the rules' build,
    is the chosen row of the new candidates table, carries the rules' figure of its own evidence, and
    the log counts them."""
    rules_out = sample_chain / "bi"
    assert run_labels(sample_chain / "params.yaml", sample_chain, tmp_path, "labels.choose=lexicon") == 0
    log = capsys.readouterr().err
    labels = pd.read_parquet(tmp_path / "labels.parquet")
    candidates = pd.read_parquet(tmp_path / "candidates.parquet")
    before = pd.read_parquet(rules_out / "candidates.parquet")
    chosen = labels[labels["rank_reason"] == LEXICON_CHOICE]
    assert len(chosen) > 100
    assert f"the layer chose {len(chosen)} labels over the rules' first" in log
    top = chosen["lang"].value_counts()
    assert f"({top.index[0]} {top.iloc[0]}," in log
    # a later form of its class in the rules' build, or the class was one the floor dropped there (every
    # form set aside as precision_floor): the layer's label can keep a class the rules' label lost
    later = set(zip(before["lang"], before["wnid"], before["label"], before["set_aside"]))
    where = list(zip(chosen["lang"], chosen["wnid"], chosen["label"]))
    kept_by_the_layer = [key for key in where if (*key, "precision_floor") in later]
    assert all((*key, "not_first") in later for key in where if key not in kept_by_the_layer)
    assert 0 < len(kept_by_the_layer) < len(where) / 2
    now = candidates[candidates["set_aside"] == ""].set_index(["lang", "wnid"])["label"]
    assert all(now[(lang, wnid)] == label for lang, wnid, label in where)
    # the rules' figure is the new label's own (its source, agreeing and silent sources, flags), not the old one's
    usable = candidates[candidates["set_aside"].isin(["", "not_first", "precision_floor"])]
    sources = usable.groupby(["lang", "wnid"])["source"].nunique()
    base = candidates.drop_duplicates(["lang", "source"]).set_index(["lang", "source"])["source_precision"]
    flags = chosen[["ambiguous_source", "is_duplicate", "used_low_precision"]].sum(axis=1)
    expected = [
        p_correct(base.get((lang, source), UNKNOWN_PRECISION), n - 1, max(sources[(lang, wnid)] - n, 0), int(f))
        for lang, wnid, source, n, f in zip(
            chosen["lang"], chosen["wnid"], chosen["source"], chosen["n_sources"], flags
        )
    ]
    assert np.mean(np.isclose(chosen["p_rules"].to_numpy(), expected)) > 0.98

    # a class whose label resolved a duplicate keeps it (that choice was forced, and its candidates table
    # marks the label it lost as `duplicate`)
    rules_labels = pd.read_parquet(rules_out / "labels.parquet")
    resolved = set(zip(*rules_labels.query("rank_reason == 'unique'")[["lang", "wnid"]].T.values))
    now_resolved = set(zip(*labels.query("rank_reason == 'unique'")[["lang", "wnid"]].T.values))
    kept_both = resolved & set(zip(labels["lang"], labels["wnid"]))
    assert kept_both and kept_both <= now_resolved

    # no label of a language names two classes more often than with the rules' choice
    def named_twice(frame: pd.DataFrame) -> int:
        keys = frame[frame["lang"] != "eng_Latn"].assign(key=lambda f: f["label"].str.casefold())
        return int(keys.duplicated(["lang", "key"]).sum())

    assert named_twice(labels) <= named_twice(pd.read_parquet(rules_out / "labels.parquet"))
