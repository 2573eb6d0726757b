"""`babelforge prompts`: the 80 CLIP templates in every label language (NLLB, slot kept).

Reads the label languages (`languages.parquet`, column `lang` = registry keys), translates
the templates with the CTranslate2 NLLB model (one batched call per language, all slot
strategies together), tags and filters the prompts, and writes `prompts.parquet` (all rows,
flagged; `use` marks what eval should use) plus a per-language summary.
"""
from __future__ import annotations

import argparse

from builders.core.params import DEFAULT_PARAMS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (groups `profile`, `prompts`)")
    parser.add_argument("--languages", default="data/babel_imagenet/languages.parquet",
                        help="label languages (column `lang`: registry keys)")
    parser.add_argument("--model", default="models/nllb-ct2", help="CTranslate2 NLLB model directory")
    parser.add_argument("--templates", default="resources/clip_templates_en.txt")
    parser.add_argument("--registry", default=None, help="languages.tsv (default: resources/languages.tsv)")
    parser.add_argument("--out", default="data/babel_imagenet/prompts.parquet")
    parser.add_argument("--summary", default="data/babel_imagenet/prompts_summary.json")
    parser.add_argument("--quiet", action="store_true", help="no per-language summary on stdout")


# Keys of the `prompts` params group: validation thresholds (PromptChecks), slot strategies,
# and the translator's settings.
PARAMS_KEYS = frozenset({
    "min_valid", "min_script_share", "langid_max_rank", "length_ratio", "strategies",
    "device", "compute_type", "beam_size", "max_batch_size", "batch_type", "max_decoding_length",
})


def prompts_table(records: list[dict]):
    """The Arrow table of prompts.parquet with a fixed schema (nulls typed, not guessed)."""
    import pyarrow as pa

    schema = pa.schema([
        ("lang", pa.string()), ("prompt_set", pa.string()), ("template_id", pa.int16()), ("text", pa.string()),
        ("english", pa.string()), ("strategy", pa.string()), ("fallback", pa.bool_()), ("score", pa.float64()),
        ("n_slots", pa.int16()), ("leftover_marker", pa.bool_()), ("script_share", pa.float64()),
        ("langid_top", pa.string()), ("langid_rank", pa.int16()), ("length_ratio", pa.float64()),
        ("is_duplicate", pa.bool_()), ("valid", pa.bool_()), ("failed", pa.string()), ("status", pa.string()),
        ("use", pa.bool_()),
    ])
    return pa.Table.from_pylist(records, schema=schema)


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict
    from pathlib import Path

    from builders.babel_imagenet.prompts import (SOURCE_LANG, PromptChecks, assemble_language, is_source,
                                                 langid_ranker, read_templates, rows_to_records)
    from builders.core.errors import BabelforgeError
    from builders.core.io import read_table, sha256_file, write_json, write_table
    from builders.core.languages import REGISTRY_PATH, read_registry
    from builders.core.params import load_params, profile_of, profile_section
    from builders.core.progress import info, progress
    from builders.core.provenance import provenance
    from builders.translation.placeholders import strategies, translate_templates

    params = load_params(args.params)
    profile = profile_of(params)
    # Any value may be a {profile: value} map (e.g. a shorter decoding limit for the tiny model).
    group = profile_section(params, "prompts")
    unknown = sorted(set(group) - PARAMS_KEYS)
    if unknown:
        raise BabelforgeError(f"params.yaml prompts: unknown key(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(PARAMS_KEYS))}")
    checks = PromptChecks.from_params(group)
    order = strategies(group.get("strategies", ["tag_noun", "brace", "degree", "section", "reference"]))
    templates = read_templates(args.templates)
    registry_path = Path(args.registry) if args.registry else REGISTRY_PATH
    if not registry_path.exists():
        raise BabelforgeError(f"{registry_path}: language registry missing; it maps label languages to NLLB codes")
    registry = read_registry(registry_path)
    if not Path(args.languages).exists():
        raise BabelforgeError(f"{args.languages}: no label languages; run `babelforge labels` first")
    keys = sorted(set(read_table(args.languages, columns=["lang"])["lang"]))
    languages = [registry.get(key) for key in keys]
    to_translate = [lang for lang in languages if lang.nllb and not is_source(lang)]

    translator = None
    if to_translate:
        from builders.translation.nllb import NllbTranslator

        translator = NllbTranslator(
            args.model, device=group.get("device", "auto"), compute_type=group.get("compute_type", "auto"),
            beam_size=int(group.get("beam_size", 4)), num_hypotheses=1,
            max_batch_size=int(group.get("max_batch_size", 4096)), batch_type=group.get("batch_type", "tokens"),
            max_decoding_length=int(group.get("max_decoding_length", 256)))
    rank = langid_ranker()

    rows, summaries = [], []
    for language in progress(languages, desc="prompts", unit="lang"):
        translated = None
        if language in to_translate:
            translated = translate_templates(translator.translate, templates, language.key, language.nllb, order,
                                             source_lang=SOURCE_LANG)
        language_rows, summary = assemble_language(language, templates, translated, checks, rank)
        rows += language_rows
        summaries.append(summary)

    models = {"nllb": translator.provenance()} if translator else {}
    record = provenance(
        "prompts",
        params={"profile": profile, "prompts": group},
        sources={"templates": {"path": str(args.templates), "sha256": sha256_file(args.templates)},
                 "languages": {"path": str(args.languages), "sha256": sha256_file(args.languages)},
                 "registry": {"path": registry_path.name, "sha256": sha256_file(registry_path)}},
        models=models,
    )
    table = prompts_table(rows_to_records(rows))
    write_table(table, args.out, sort_by=["lang", "prompt_set", "template_id"], provenance=record)
    by_status: dict[str, int] = {}
    for summary in summaries:
        by_status[summary.status] = by_status.get(summary.status, 0) + 1
    write_json({"models": models, "by_status": by_status,
                "languages": {s.lang: asdict(s) for s in summaries}}, args.summary)
    if not args.quiet:
        for summary in summaries:
            print(summary.line())
    info(f"prompts: {len(rows)} prompts in {len(summaries)} languages ("
         + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items())) + f") -> {args.out}")
    return 0
