"""`babelforge eval_export`: Babel-ImageNet labels + prompts in CLIP_benchmark's layout.

Writes `babel_imagenet.json` and `nllb_dist13b_prompts.json` (see `babelforge.eval.export.clip_benchmark`),
the fallback prompts in files named for them (`nllb_dist13b_prompts.en-fallback.json`), and
`export.json` (per language: its code, class count, which prompts it got and their file; the
provenance). Copy the two files into CLIP_benchmark's `clip_benchmark/datasets/` folder
and run `clip_benchmark eval --dataset babel_imagenet --language <code>` on the built version.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.babel_imagenet.prompts import read_templates
from babelforge.core.config import from_group, setting
from babelforge.core.io import read_table
from babelforge.core.languages import ENGLISH
from babelforge.core.progress import info
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.eval.config import CommonConfig
from babelforge.eval.documents import dataset_version
from babelforge.eval.export.clip_benchmark import (
    PROMPTS_FILE,
    layout,
    prompt_files,
    prompts_file,
    usable_template,
    write_layout,
)
from babelforge.eval.flags import add_language_flag
from babelforge.eval.inputs import require
from babelforge.eval.labels import (
    ENGLISH_TEMPLATES,
    labels_by_language,
    select_languages,
    translated_templates,
)
from babelforge.eval.languages import language_registry, language_resolver, requested_languages
from babelforge.eval.results import stage_params


@dataclass(frozen=True)
class Config:
    """The `eval.export` group of params.yaml."""

    GROUP = "eval.export"
    out_dir: str = setting("build/clip_benchmark", "folder the CLIP_benchmark files are written to", metavar="DIR")
    languages: list[str] | None = setting(None, "only these languages (null: every language with labels)")
    fallback: Literal["english", "label"] = setting(
        "english",
        "templates for a language without usable translated prompts: english (the 80 CLIP templates) "
        "or label (the bare label)",
    )
    drop_duplicate_labels: bool = setting(False, "leave out labels flagged is_duplicate")
    common: CommonConfig = from_group(CommonConfig, "eval.common", "settings every eval stage shares (registry)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    add_language_flag(parser, "eval.export")


def export_templates(
    labels: dict, translated: dict[str, list[str]], english: list[str], fallback: str
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """({lang: templates}, {lang: which set}) for every language of `labels`.

    Translated templates CLIP_benchmark cannot fill (a brace besides the slot) are left out;
    a language left with none gets the fallback set, and says so.
    """

    templates, used = {}, {}
    for lang in sorted(labels):
        own = [t for t in translated.get(lang, []) if usable_template(t)]
        if own:
            templates[lang], used[lang] = own, "translated"
        elif lang == ENGLISH:
            templates[lang], used[lang] = list(english), "english"
        elif fallback == "english":
            templates[lang], used[lang] = list(english), "english-fallback"
        else:
            templates[lang], used[lang] = ["{}"], "label-fallback"
    return templates, used


def run(config: Config) -> int:

    labels_path = require(config.paths.labels, "labels table", "labels")
    labels = labels_by_language(read_table(labels_path), config.drop_duplicate_labels)
    labels = select_languages(
        labels, requested_languages(config.languages, language_resolver(config.common)), str(labels_path)
    )
    prompts_path = Path(config.paths.prompts)
    translated = translated_templates(read_table(prompts_path)) if prompts_path.exists() else {}
    templates, used = export_templates(labels, translated, read_templates(ENGLISH_TEMPLATES), config.fallback)
    registry = language_registry(config.common)
    codes = {lang: registry.get(lang).babelnet or registry.get(lang).iso639_1 or lang for lang in labels}
    classnames, prompts = layout(labels, templates, codes)
    manifest = {
        "format": "CLIP_benchmark babel_imagenet (babel_imagenet.json, nllb_dist13b_prompts.json)",
        "languages": {
            codes[lang].upper(): {
                "key": lang,
                "n_classes": len(labels[lang]),
                "prompts": used[lang],
                "prompts_file": prompts_file(used[lang]),
                "n_templates": len(templates[lang]),
            }
            for lang in sorted(labels)
        },
        "provenance": provenance(
            "eval_export",
            params=stage_params(config),
            sources={"labels": dataset_version(labels_path), "prompts": dataset_version(prompts_path)},
        ),
    }
    files = prompt_files(prompts, {codes[lang].upper(): kind for lang, kind in used.items()})
    folder = write_layout(config.out_dir, classnames, files, manifest)
    fallbacks = sum(1 for kind in used.values() if kind.endswith("fallback"))
    info(
        f"eval_export: {len(classnames)} languages ({fallbacks} with {config.fallback} fallback prompts, "
        f"in {', '.join(sorted(set(files) - {PROMPTS_FILE})) or 'no file'}) -> {folder}"
    )
    return 0


STAGE = Stage(
    "eval_export",
    "Babel-ImageNet labels + prompts in CLIP_benchmark's layout",
    run,
    config=Config,
    flags={
        "--out": ("out_dir", "folder to write"),
        "--labels": ("paths.labels", "labels.parquet"),
        "--prompts": ("paths.prompts", "prompts.parquet"),
    },
    configure=configure,
    tool=True,
    docs="docs/guides/evaluate.md",
)
