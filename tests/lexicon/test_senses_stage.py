"""`babelforge senses` on the BabelNet source (loopback API), then `babelforge labels` from it."""

import pandas as pd
import yaml

from babelforge.cli import main as cli
from babelforge.core.io import read_table, write_table

from .conftest import API_KEY, SYNSET_IDS


def write_inputs(tmp_path, repo_root, api_url, wordnet_reader):
    from babelforge.core.imagenet import read_imagenet_classes
    from babelforge.lexicon.wordnet import resolve_class

    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["profile"] = "full"
    params["senses"]["babelnet"].update(base_url=api_url, cache_dir=str(tmp_path / "cache"))
    params["labels"]["min_classes"] = 1
    params["paths"]["metrics"] = str(tmp_path / "metrics")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    # the wordnet artifact, reduced to the synsets the loopback API knows
    wanted = [c for c in read_imagenet_classes() if f"{c.wnid[1:]}-{c.wnid[0]}" in SYNSET_IDS]
    known = [resolve_class(wordnet_reader, c) for c in wanted]
    frame = pd.DataFrame(
        [
            {
                "class_idx": k.class_idx,
                "wnid": k.wnid,
                "synset": k.synset,
                "synset_name": k.synset_name,
                "clip_name": k.clip_name,
                "lemmas": list(k.lemmas),
                "definition": k.definition,
                "hypernym_path": list(k.hypernym_path),
                "taxa": list(k.taxa),
                "broader_lemmas": list(k.broader_lemmas),
                "other_senses": list(k.other_senses),
            }
            for k in known
        ]
    )
    write_table(frame, tmp_path / "wn.parquet", sort_by=["class_idx"])
    return str(tmp_path / "params.yaml")


def senses(params, tmp_path):
    return cli(
        ["senses", "--params", params, "--wordnet", str(tmp_path / "wn.parquet"), "--out", str(tmp_path / "senses")]
    )


def test_babelnet_senses_then_labels(tmp_path, repo_root, babelnet_api, wordnet_reader, monkeypatch, capsys):
    params = write_inputs(tmp_path, repo_root, babelnet_api.url, wordnet_reader)
    monkeypatch.setenv("BABELNET_KEY", API_KEY)
    assert senses(params, tmp_path) == 0
    cold = len(babelnet_api.requests)
    assert cold > len(SYNSET_IDS)
    out = tmp_path / "senses" / "babelnet.parquet"
    frame = read_table(out)
    flagged = frame[frame["is_translation"]]
    assert set(flagged["source"]) >= {"WNTR", "WIKITR"}
    assert API_KEY not in out.read_bytes().decode("latin-1")

    assert (
        cli(
            [
                "labels",
                "--params",
                params,
                "--wordnet",
                str(tmp_path / "wn.parquet"),
                "--senses",
                str(tmp_path / "senses"),
                "--out",
                str(tmp_path / "bi/labels.parquet"),
                "--languages",
                str(tmp_path / "bi/languages.parquet"),
                "--candidates",
                str(tmp_path / "bi/candidates.parquet"),
            ]
        )
        == 0
    )
    labels = read_table(tmp_path / "bi" / "labels.parquet").set_index(["lang", "wnid"])
    # German tench: WIKI "Schleie" first; WIKIRED "Schlei" passed over; WNTR "tench" is English anyway
    assert labels.loc[("deu_Latn", "n01440764"), "label"] == "Schleie"
    # Polish tench: the WIKITR sense is machine-translated, the WIKI one is kept (underscore normalised,
    # the Wikipedia title's qualifier cleaned off and kept as provenance)
    assert labels.loc[("pol_Latn", "n01440764"), "label"] == "Lin"
    assert labels.loc[("pol_Latn", "n01440764"), "raw_lemma"] == "Lin_(ryba)"
    # the full profile ranks by the paper's rule
    assert set(labels["rank_reason"]) <= {"first", "only"}
    assert labels.loc[("pol_Latn", "n01440764"), "n_dropped_mt"] == 1
    # German mountain bike: two BabelNet synsets, the WIKI sense wins over a WIKIDATA_ALIAS one
    assert labels.loc[("deu_Latn", "n03792782"), "label"] == "Mountainbike"
    # French Chihuahua: only an alias that equals the English lemma: no label
    assert ("fra_Latn", "n02085620") not in labels.index

    # A rebuild is answered from the cache: no request, no key needed, identical bytes.
    before = out.read_bytes()
    monkeypatch.delenv("BABELNET_KEY")
    assert senses(params, tmp_path) == 0
    assert len(babelnet_api.requests) == cold
    assert out.read_bytes() == before

    # The provenance names the API version and the date of the newest cached answer used.
    import calendar
    import os

    from babelforge.core.io import read_provenance

    assert read_provenance(out)["sources"]["babelnet"]["api_version"] == "v9"
    answers = sorted((tmp_path / "cache").rglob("*.json"))
    for index, path in enumerate(answers):  # one answer from 2024-03-01, the others older
        day = (2024, 3, 1) if index == len(answers) // 2 else (2023, 1, 15)
        stamp = calendar.timegm((*day, 12, 0, 0))
        os.utime(path, (stamp, stamp))
    assert senses(params, tmp_path) == 0
    assert read_provenance(out)["sources"] == {"babelnet": {"api_version": "v9", "cache_date": "2024-03-01"}}
