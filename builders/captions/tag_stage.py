"""`babelforge captions_tag`: score every hypothesis; write `attributes.parquet`.

One row per (caption_id, lang, hyp_rank) with the stored columns of every caption tagger
(`builders.captions.taggers`: langid, script, copy, repetition, chrF and COMETKiwi). The Kiwi
model is loaded first, so a missing or gated model stops the stage before any work.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

from builders.captions.taggers import TAGGERS
from builders.core.config import Paths, from_group, setting, stage_paths


@dataclass(frozen=True)
class Config:
    """The `captions.tag` group of params.yaml; reads and writes in `paths.captions`."""

    GROUP = "captions.tag"
    kiwi_model: str = setting("models/cometkiwi-tiny", "COMETKiwi: a Hub id (full: Unbabel/wmt22-cometkiwi-da) "
                                                       "or a local checkpoint directory")
    kiwi_revision: str | None = setting(None, "Hub commit to pin (full)")
    kiwi_batch_size: int = setting(64, "pairs per COMETKiwi batch")
    kiwi_device: str = setting("auto", "cuda, cpu or auto (cuda when present)")
    kiwi_length_sorted: bool = setting(True, "batch by length (less padding); scores come back in input order")
    kiwi_threads: int | None = setting(1, "torch CPU threads for COMETKiwi (null: torch's default)")
    repeat_max_n: int = setting(4, "longest n-gram the repetition tagger looks for")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", dest="paths.captions", help="folder of the caption artifacts (paths.captions)")


def languages_in_play(source_lang: str, target_langs, registry) -> dict[str, str | None]:
    """Registry key -> langid code for the source and every target language."""
    return {key: registry.get(key).langid for key in sorted({source_lang, *target_langs})}


def run(config: Config) -> int:
    from pathlib import Path

    import pandas as pd

    from builders.captions import langcheck
    from builders.captions.qe import kiwi_scorer
    from builders.captions.settings import (
        ATTRIBUTES_FILE, HYPOTHESES_FILE, KEY, REFERENCES_FILE, SOURCE_FILE, load_registry,
    )
    from builders.captions.taggers import ATTRIBUTES, TagContext, run_taggers
    from builders.core import taggers
    from builders.core.config import as_params
    from builders.core.determinism import runtime
    from builders.core.errors import BabelforgeError
    from builders.core.io import read_table, sha256_file, write_table
    from builders.core.progress import info
    from builders.core.provenance import provenance

    if config.kiwi_threads:
        import torch

        torch.set_num_threads(config.kiwi_threads)
    scorer, kiwi_record = kiwi_scorer(config.kiwi_model, config.kiwi_revision, config.kiwi_batch_size,
                                      config.kiwi_device, config.kiwi_length_sorted)
    languages = load_registry(None)
    data = Path(config.paths.captions)
    hypotheses = read_table(data / HYPOTHESES_FILE)
    source = read_table(data / SOURCE_FILE, columns=["caption_id", "caption", "source_lang"])
    references = read_table(data / REFERENCES_FILE)
    if source.empty:
        raise BabelforgeError(f"{data / SOURCE_FILE}: no captions")
    source_lang = source["source_lang"].iloc[0]
    in_play = languages_in_play(source_lang, hypotheses["lang"].unique(), languages)
    identifier = langcheck.LanguageIdentifier(in_play) if any(in_play.values()) else None
    context = TagContext(
        sources=dict(zip(source["caption_id"], source["caption"])),
        expected_scripts={key: languages.get(key).expected_scripts for key in in_play},
        identifier=identifier,
        references={(c, l): t for c, l, t in references[["caption_id", "lang", "text"]].itertuples(index=False)},
        repeat_max_n=config.repeat_max_n,
        kiwi=scorer,
    )
    rows = hypotheses[KEY + ["text"]].to_dict("records")
    info(f"captions_tag: {len(rows)} hypotheses, languages in play {', '.join(in_play)}")
    columns = run_taggers(rows, context)
    declared = {column: kind for name in TAGGERS for column, kind in taggers.get(name).stored_columns.items()}
    frame = pd.DataFrame({column: pd.Series(columns[column], dtype=_dtype(declared[column]))
                          for column in ATTRIBUTES})
    attributes = pd.concat([hypotheses[KEY].reset_index(drop=True), frame], axis=1)
    record = provenance(
        "captions_tag",
        params={"profile": config.profile, "tag": as_params(config)},
        sources={name: {"path": str(data / name), "sha256": sha256_file(data / name)}
                 for name in (HYPOTHESES_FILE, SOURCE_FILE, REFERENCES_FILE)},
        models={"kiwi": {**kiwi_record, "runtime": runtime(scorer.device, "float32")}, "langid": {"package": "langid", "languages": in_play}},
    )
    record["taggers"] = sorted(TAGGERS)
    write_table(attributes, data / ATTRIBUTES_FILE, sort_by=KEY, provenance=record)
    info(f"captions_tag: {len(attributes.columns) - len(KEY)} attribute columns -> {data / ATTRIBUTES_FILE}")
    return 0


def _dtype(kind: type) -> str | None:
    """The pandas dtype of a declared column type (None in a float column is NaN); text is left
    to pandas' own inference (its string dtype)."""
    return {float: "float64", int: "int64", bool: "bool"}.get(kind)
