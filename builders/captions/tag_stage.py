"""`babelforge captions_tag`: score every hypothesis; write `attributes.parquet`.

One row per (caption_id, lang, hyp_rank) with the columns of every tagger in
`builders.captions.taggers` plus COMETKiwi (`kiwi_v1__score`). The Kiwi model is loaded
first, so a missing or gated model stops the stage before any work.
"""
from __future__ import annotations

import argparse

KIWI_COLUMN = "kiwi_v1__score"


def configure(parser: argparse.ArgumentParser) -> None:
    from builders.captions.settings import add_common_arguments

    add_common_arguments(parser)


def languages_in_play(source_lang: str, target_langs, registry) -> dict[str, str | None]:
    """Registry key -> langid code for the source and every target language."""
    return {key: registry.get(key).langid for key in sorted({source_lang, *target_langs})}


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from builders.captions import langcheck
    from builders.captions.qe import KiwiScorer, load_kiwi
    from builders.captions.settings import (
        ATTRIBUTES_FILE, HYPOTHESES_FILE, KEY, REFERENCES_FILE, SOURCE_FILE, captions_params, load_registry,
    )
    from builders.captions.taggers import TAGGERS, TagContext, run_taggers
    from builders.core.errors import BabelforgeError
    from builders.core.io import read_table, sha256_file, write_table
    from builders.core.params import load_params
    from builders.core.progress import info
    from builders.core.provenance import provenance

    params = load_params(args.params)
    settings = captions_params(params, "tag")
    registry = load_registry(args.registry)
    kiwi_model, kiwi_record = load_kiwi(str(settings["kiwi_model"]), settings.get("kiwi_revision"))
    scorer = KiwiScorer(
        kiwi_model, batch_size=int(settings.get("kiwi_batch_size", 64)),
        device=settings.get("kiwi_device", "auto"), length_sorted=bool(settings.get("kiwi_length_sorted", True)),
    )

    data = Path(args.data_dir)
    hypotheses = read_table(data / HYPOTHESES_FILE)
    source = read_table(data / SOURCE_FILE, columns=["caption_id", "caption", "source_lang"])
    references = read_table(data / REFERENCES_FILE)
    if source.empty:
        raise BabelforgeError(f"{data / SOURCE_FILE}: no captions")
    source_lang = source["source_lang"].iloc[0]
    in_play = languages_in_play(source_lang, hypotheses["lang"].unique(), registry)
    identifier = langcheck.LanguageIdentifier(in_play) if any(in_play.values()) else None
    context = TagContext(
        sources=dict(zip(source["caption_id"], source["caption"])),
        expected_scripts={key: registry.get(key).expected_scripts for key in in_play},
        identifier=identifier,
        references={(c, l): t for c, l, t in references[["caption_id", "lang", "text"]].itertuples(index=False)},
        repeat_max_n=int(settings.get("repeat_max_n", 4)),
    )
    rows = hypotheses[KEY + ["text"]].to_dict("records")
    info(f"captions_tag: {len(rows)} hypotheses, languages in play {', '.join(in_play)}")
    columns = run_taggers(rows, context)
    columns[KIWI_COLUMN] = scorer.score([context.sources[row["caption_id"]] for row in rows],
                                        [row["text"] for row in rows])

    attributes = pd.concat([hypotheses[KEY].reset_index(drop=True), pd.DataFrame(columns)], axis=1)
    record = provenance(
        "captions_tag",
        params={"profile": params.get("profile", "sample"), "tag": settings},
        sources={name: {"path": str(data / name), "sha256": sha256_file(data / name)}
                 for name in (HYPOTHESES_FILE, SOURCE_FILE, REFERENCES_FILE)},
        models={"kiwi": kiwi_record, "langid": {"package": "langid", "languages": in_play}},
    )
    record["taggers"] = sorted([*TAGGERS, "kiwi_v1"])
    write_table(attributes, data / ATTRIBUTES_FILE, sort_by=KEY, provenance=record)
    info(f"captions_tag: {len(attributes.columns) - len(KEY)} attribute columns -> {data / ATTRIBUTES_FILE}")
    return 0
