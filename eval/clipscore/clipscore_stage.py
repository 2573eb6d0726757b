"""`babelforge eval_clipscore`: CLIPScore, RefCLIPScore and pairwise accuracy per caption set and language.

For a TSV of image-caption pairs (VALSE, human ratings) use `babelforge eval_clipscore_pairs`.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from babelforge.core.config import setting
from babelforge.core.stages import Stage
from babelforge.eval.captions import add_caption_dataset_flags, caption_task_rows
from babelforge.eval.clipscore.rows import clipscore_rows
from babelforge.eval.config import ImageStageConfig, model_ids
from babelforge.eval.flags import add_language_flag, add_model_flags, add_out_flag
from babelforge.eval.published import SYNTAX
from babelforge.eval.results import print_results, results_path, write_run

COLUMNS = ("model", "dataset", "lang", "n_images", "clipscore", "ref_clipscore", "pairwise_accuracy")

# A run with other models, languages or settings and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.eval_reports>/clipscore.json.
AD_HOC_OUTPUTS = {"out": "clipscore.json"}


@dataclass(frozen=True)
class Config(ImageStageConfig):
    """The `eval.clipscore` group of params.yaml."""

    GROUP = "eval.clipscore"
    caption_sets: list[str] = setting(["data/raw/xtd/xtd.json"], "XTD-style caption-set JSON files")
    images: str | dict[str, str] = setting(
        {"sample": "data/eval/images/captions", "full": {"xtd": "data/images/coco/train2014"}},
        "the caption sets' images: one folder, or {caption set: folder}",
    )
    max_images: int | None = setting(
        {"sample": 100, "full": None}, "first N images of each caption set (null: all)", minimum=1
    )
    languages: list[str] | None = setting(None, "only these languages (null: every language of the caption sets)")
    reference_lang: str | None = setting(
        "en", "RefCLIPScore reference: this caption-set language's captions of the same image (null: no RefCLIPScore)"
    )
    out: str | None = setting(None, "results JSON (null: <paths.eval_reports>/clipscore.json)")
    dataset: str | None = setting(
        None, f"the captions from a published mt-captions instead of caption_sets: {SYNTAX} (null: caption_sets)"
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_model_flags(parser)
    add_language_flag(parser, "eval.clipscore")
    add_out_flag(parser, "clipscore")
    add_caption_dataset_flags(parser, "eval.clipscore")


def run(config: Config) -> int:

    helpers = [config.reference_lang] if config.reference_lang else []
    rows, sources, quarantine, inputs_profile = caption_task_rows(
        config, "clipscore", clipscore_rows, helper_codes=helpers, reference_lang=config.reference_lang
    )
    write_run(
        "clipscore", rows, config, sources, results_path(config, "clipscore"), quarantine, inputs_profile=inputs_profile
    )
    print_results(rows, COLUMNS)
    return 0


STAGE = Stage(
    "eval_clipscore",
    "CLIPScore / RefCLIPScore / pairwise accuracy per caption set and language",
    run,
    config=Config,
    configure=configure,
    deps=(
        "${paths.tiny_clip}",
        "${paths.eval_images}/captions",
        "data/raw/xtd/xtd.json",
    ),
    languages=("caption-sets",),
    outs=("${paths.eval_reports}/clipscore.json",),
    pinned=True,
    docs="docs/guides/evaluate.md",
    # runs outside a project too (no params.yaml: its settings' defaults), on a published mt-captions (--dataset).
    standalone=True,
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    run_subject=model_ids,
)
