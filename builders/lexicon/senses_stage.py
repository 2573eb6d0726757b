"""`babelforge senses`: multilingual senses of the 1,000 ImageNet synsets, from OMW or BabelNet.

The source comes from the profile (`senses.source.<profile>`): `omw` reads the OMW raw data
offline; `babelnet` queries the BabelNet HTTP API with the key in the environment.
"""
from __future__ import annotations

import argparse

from builders.core.params import DEFAULT_PARAMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (groups `profile`, `senses`)")
    parser.add_argument("--wordnet", default="data/wordnet/imagenet1k.parquet", help="output of `babelforge wordnet`")
    parser.add_argument("--out-dir", default="data/senses", help="writes <out-dir>/<source>.parquet")


def active_source(params: dict) -> str:
    from builders.core.params import profile_section

    return profile_section(params, "senses")["source"]


def build_source(name: str, group: dict):
    """The SenseSource for `name`, configured from the `senses` params group."""
    from builders.core.errors import BabelforgeError
    from builders.core.languages import registry

    if name == "omw":
        from builders.lexicon.omw import OmwSource

        return OmwSource(group["omw_dir"], source_order=group.get("omw_source_order", ("omw", "wikt", "cldr")))
    if name == "babelnet":
        from builders.lexicon.babelnet import BabelNetSource

        settings = group["babelnet"]
        languages = [lang.key for lang in registry() if lang.babelnet and lang.in_babel_imagenet]
        return BabelNetSource(
            cache_dir=settings["cache_dir"], languages=languages,
            batch_size=settings["batch_size"], base_url=settings["base_url"],
        )
    raise BabelforgeError(f"params.yaml: unknown sense source {name!r} (omw or babelnet)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from builders.core.io import read_table, write_table
    from builders.core.params import load_params, section
    from builders.core.progress import info
    from builders.core.provenance import provenance
    from builders.lexicon.senses import SENSE_COLUMNS

    params = load_params(args.params)
    group = section(params, "senses")
    name = active_source(params)
    source = build_source(name, group)
    synsets = read_table(args.wordnet, columns=["synset"])["synset"].tolist()
    if name == "babelnet" and source.cached_synsets(synsets) < len(synsets):
        source.require_key()  # fail now, naming the variable, not after the first request
    senses = list(source.senses(synsets))
    frame = pd.DataFrame([[getattr(s, c) for c in SENSE_COLUMNS] for s in senses], columns=list(SENSE_COLUMNS))
    frame["rank"] = frame["rank"].astype("int32")
    records = source.source_records() if hasattr(source, "source_records") else {}
    record = provenance("senses", params={"profile": params.get("profile", "sample"), "senses": group},
                        sources={name: records})
    out = Path(args.out_dir) / f"{name}.parquet"
    write_table(frame, out, sort_by=["lang", "synset", "rank"], provenance=record)
    info(f"senses: {len(frame)} senses of {frame['synset'].nunique()} synsets in {frame['lang'].nunique()} "
         f"languages from {name} -> {out}")
    return 0
