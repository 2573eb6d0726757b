"""`babelforge captions_translate`: read English captions, translate them n-best with NLLB.

Writes into --data-dir: `source.parquet` (caption_id, image, caption, source_lang + the
input's other columns, untouched), `references.parquet` (caption_id, lang, text: human
translations the source ships with) and `hypotheses.parquet` (caption_id, lang,
hyp_rank, text, mt_score). Nothing is written unless translation finished.
"""
from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    from builders.captions.settings import add_common_arguments

    add_common_arguments(parser)


def load_input(params: dict, registry):
    """The caption set and target language keys that `captions.input` names."""
    from builders.captions.readers import read_captions
    from builders.captions.settings import captions_params
    from builders.core.errors import BabelforgeError

    settings = captions_params(params, "input")
    captions = read_captions(settings["format"], settings["path"], settings["source"], registry)
    captions = captions.limited(settings.get("limit"))
    targets = [registry.get(key).key for key in settings["targets"]]
    if captions.source_lang in targets:
        raise BabelforgeError(f"captions.input.targets contains the source language {captions.source_lang}")
    return captions, targets, settings


def make_translator(settings):
    """The NLLB translator for `captions.translate` (the one place that names the class)."""
    from builders.core.errors import BabelforgeError

    try:
        from builders.translation.nllb import NllbTranslator
    except ImportError:
        raise BabelforgeError(
            "builders.translation.nllb is missing: the NLLB translator (prompts issue) is needed"
        ) from None
    return NllbTranslator(settings.model, **settings.translator_kwargs())


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from builders.captions.settings import (
        HYPOTHESES_FILE, KEY, REFERENCES_FILE, SOURCE_FILE, captions_params, load_registry,
    )
    from builders.captions.translate import HYPOTHESIS_COLUMNS, TranslateSettings, translate_nbest
    from builders.core.errors import BabelforgeError
    from builders.core.io import sha256_file, write_table
    from builders.core.params import load_params
    from builders.core.progress import info, progress
    from builders.core.provenance import provenance

    params = load_params(args.params)
    registry = load_registry(args.registry)
    captions, targets, input_settings = load_input(params, registry)
    settings = TranslateSettings.from_params(captions_params(params, "translate"))
    codes = {}
    for key in targets + [captions.source_lang]:
        language = registry.get(key)
        if not language.nllb:
            raise BabelforgeError(f"{key} has no NLLB code in the language registry: NLLB cannot translate it")
        codes[key] = language.nllb
    translator = make_translator(settings)
    info(f"captions_translate: {len(captions.captions)} captions -> {len(targets)} languages, "
         f"beam {settings.beam_size}, {settings.num_hypotheses} hypotheses")
    rows = translate_nbest(
        translator,
        [(row["caption_id"], row["caption"]) for row in captions.captions],
        codes[captions.source_lang],
        {key: codes[key] for key in targets},
        chunk_size=settings.chunk_size,
        progress=lambda chunks, total: progress(chunks, desc="translate", total=total, unit="chunk"),
    )

    model_record = translator.provenance() if hasattr(translator, "provenance") else {"model": settings.model}
    record = provenance(
        "captions_translate",
        params={"profile": params.get("profile", "sample"), "input": input_settings, "translate": vars(settings)},
        sources={"captions": {"path": str(input_settings["path"]), "sha256": sha256_file(input_settings["path"])}},
        models={"translator": model_record},
    )
    out = Path(args.data_dir)
    source = pd.DataFrame(captions.captions)
    source.insert(3, "source_lang", captions.source_lang)
    references = pd.DataFrame(captions.references, columns=["caption_id", "lang", "text"])
    hypotheses = pd.DataFrame(rows, columns=list(HYPOTHESIS_COLUMNS)).astype({"hyp_rank": "int32"})
    write_table(source, out / SOURCE_FILE, sort_by=["caption_id"], provenance=record)
    write_table(references, out / REFERENCES_FILE, sort_by=["caption_id", "lang"], provenance=record)
    write_table(hypotheses, out / HYPOTHESES_FILE, sort_by=KEY, provenance=record)
    info(f"captions_translate: {len(hypotheses)} hypotheses, {len(references)} references -> {out}")
    return 0
