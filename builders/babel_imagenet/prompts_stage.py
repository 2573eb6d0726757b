"""`babelforge prompts`: the 80 CLIP templates in every label language (NLLB, slot kept).

Reads the label languages (`languages.parquet`, column `lang` = registry keys), translates
the templates with the CTranslate2 NLLB model (one batched call per language, all slot
strategies together), tags and filters the prompts, and writes `prompts.parquet` (all rows,
flagged; `use` marks what eval should use) plus a per-language summary.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from babelforge.babel_imagenet.prompts import (
    DEFAULT_CHECKS,
    PROMPT_TAGGERS,
    SOURCE_LANG,
    assemble_language,
    is_source,
    langid_ranker,
    read_templates,
    rows_to_records,
)
from babelforge.core.config import as_params, from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_table, sha256_file, write_json, write_table
from babelforge.core.languages import REGISTRY_PATH, read_registry
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.core.taggers import Thresholds
from babelforge.translation.nllb import NllbTranslator
from babelforge.translation.placeholders import strategies, translate_templates
from babelforge.translation.template_cache import TemplateCache, model_fingerprint

TAGGERS = PROMPT_TAGGERS


@dataclass(frozen=True)
class Config:
    """The `prompts` group of params.yaml: slot strategies, the translator's settings and the checks."""

    GROUP = "prompts"
    strategies: list[str] = setting(
        ["tag_noun", "brace", "degree", "section", "reference"], "slot encodings, tried in this order"
    )
    device: str = setting("auto", "cuda when a GPU is present, else cpu")
    compute_type: str = setting("auto", "int8_float16 on GPU, int8 on CPU")
    beam_size: int = setting(4, "beam size of the translator", minimum=1)
    max_batch_size: int = setting(4096, "tokens per batch (batch_type tokens)", minimum=1)
    batch_type: str = setting("tokens", "tokens or examples")
    max_decoding_length: int = setting(
        {"sample": 24, "full": 64}, "output tokens (the random tiny model of sample hardly ever stops)", minimum=1
    )
    min_valid: int = setting(
        40, "a language needs this many prompts that pass the checks, else the fallback sets", minimum=0
    )
    checks: Thresholds = setting(
        Thresholds(DEFAULT_CHECKS),
        "check -> {prompts.parquet column: {min: x} | {max: x} | {equals: x} [, missing: fail]} (`default`), "
        "per-language overrides (`languages`); null turns a check or bound off",
    )
    templates: str = setting(
        "resources/clip_templates_en.txt", "the English CLIP templates, one per line", metavar="FILE"
    )
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)", metavar="FILE")
    cache: str | None = setting(
        ".cache/prompts",
        "translated templates per language and model, reused when "
        "only the language list changes (null: no cache; not a DVC output)",
    )
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def prompts_table(records: list[dict]):
    """The Arrow table of prompts.parquet with a fixed schema (nulls typed, not guessed)."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("lang", pa.string()),
            ("prompt_set", pa.string()),
            ("template_id", pa.int16()),
            ("text", pa.string()),
            ("english", pa.string()),
            ("strategy", pa.string()),
            ("fallback", pa.bool_()),
            ("score", pa.float64()),
            ("n_slots", pa.int16()),
            ("leftover_marker", pa.bool_()),
            ("script_share", pa.float64()),
            ("langid_top", pa.string()),
            ("langid_rank", pa.int16()),
            ("length_ratio", pa.float64()),
            ("is_duplicate", pa.bool_()),
            ("valid", pa.bool_()),
            ("failed", pa.string()),
            ("status", pa.string()),
            ("use", pa.bool_()),
        ]
    )
    return pa.Table.from_pylist(records, schema=schema)


def run(config: Config) -> int:

    paths = config.paths
    # A typo in a check's column stops the stage before any translation.
    config.checks.check(prompts_table([]).schema.names, "prompts.checks")
    order = strategies(config.strategies)
    templates = read_templates(config.templates)
    registry_path = Path(config.registry) if config.registry else REGISTRY_PATH
    if not registry_path.exists():
        raise BabelforgeError(f"{registry_path}: language registry missing; it maps label languages to NLLB codes")
    registry = read_registry(registry_path)
    if not Path(paths.languages).exists():
        raise BabelforgeError(f"{paths.languages}: no label languages; run `babelforge labels` first")
    keys = sorted(set(read_table(paths.languages, columns=["lang"])["lang"]))
    languages = [registry.get(key) for key in keys]
    to_translate = [lang for lang in languages if lang.nllb and not is_source(lang)]

    translator = cache = None
    if to_translate:
        translator = NllbTranslator(
            paths.nllb_model,
            device=config.device,
            compute_type=config.compute_type,
            beam_size=config.beam_size,
            num_hypotheses=1,
            max_batch_size=config.max_batch_size,
            batch_type=config.batch_type,
            max_decoding_length=config.max_decoding_length,
        )
        if config.cache:
            setup = {
                "model": model_fingerprint(translator.model_dir),
                "translator": translator.provenance(),
                "max_batch_size": config.max_batch_size,
                "batch_type": config.batch_type,
                "source_lang": SOURCE_LANG,
            }
            cache = TemplateCache(config.cache, setup)
    rank = langid_ranker()

    def translate(language):
        return translate_templates(
            translator.translate, templates, language.key, language.nllb, order, source_lang=SOURCE_LANG
        )

    rows, summaries = [], []
    for language in progress(languages, desc="prompts", unit="lang"):
        translated = None
        if language in to_translate and cache is not None:
            translated = cache.translations(
                language.key,
                language.nllb,
                templates,
                [s.name for s in order],
                lambda language=language: translate(language),
            )
        elif language in to_translate:
            translated = translate(language)
        language_rows, summary = assemble_language(
            language, templates, translated, config.checks, config.min_valid, rank
        )
        rows += language_rows
        summaries.append(summary)

    models = {"nllb": translator.provenance()} if translator else {}
    record = provenance(
        "prompts",
        params={"profile": config.profile, "prompts": as_params(config)},
        sources={
            "templates": {"path": str(config.templates), "sha256": sha256_file(config.templates)},
            "languages": {"path": str(paths.languages), "sha256": sha256_file(paths.languages)},
            "registry": {"path": registry_path.name, "sha256": sha256_file(registry_path)},
        },
        models=models,
    )
    table = prompts_table(rows_to_records(rows))
    write_table(table, paths.prompts, sort_by=["lang", "prompt_set", "template_id"], provenance=record)
    by_status: dict[str, int] = {}
    for summary in summaries:
        by_status[summary.status] = by_status.get(summary.status, 0) + 1
    write_json(
        {"models": models, "by_status": by_status, "languages": {s.lang: asdict(s) for s in summaries}},
        paths.prompts_summary,
    )
    for summary in summaries:
        print(summary.line())
    if cache is not None:
        info(f"prompts: {len(cache.misses)} languages translated, {len(cache.hits)} reused from {config.cache}")
    info(
        f"prompts: {len(rows)} prompts in {len(summaries)} languages ("
        + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items()))
        + f") -> {paths.prompts}"
    )
    return 0


STAGE = Stage(
    "prompts",
    "translate the 80 CLIP templates per label language",
    run,
    config=Config,
    flags={
        "--languages": ("paths.languages", "label languages, column `lang`: registry keys"),
        "--model": ("paths.nllb_model", "CTranslate2 NLLB model directory"),
        "--templates": ("templates", "English CLIP templates"),
        "--registry": ("registry", "languages.tsv"),
        "--out": ("paths.prompts", "prompts.parquet to write"),
        "--summary": ("paths.prompts_summary", "per-language summary JSON to write"),
    },
    deps=(
        "${paths.languages}",
        "${paths.nllb_model}",
        "resources/clip_templates_en.txt",
    ),
    languages=("babel-imagenet",),
    outs=(
        "${paths.prompts}",
        "${paths.prompts_summary}",
    ),
    pinned=True,
    docs="docs/datasets/prompts.md",
    taggers=tuple(TAGGERS),
    owns={
        "prompts": ("data/babel_imagenet/prompts.parquet", "translated CLIP prompts"),
        "prompts_summary": ("data/babel_imagenet/prompts_summary.json", "prompt strategy summary"),
    },
)
