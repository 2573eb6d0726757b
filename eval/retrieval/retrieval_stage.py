"""`babelforge eval_retrieval`: text<->image recall@1/5/10 per caption set and language."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from babelforge.core.config import setting
from babelforge.core.stages import Stage
from babelforge.eval.captions import add_caption_dataset_flags, caption_task_rows
from babelforge.eval.config import ImageStageConfig, model_ids
from babelforge.eval.flags import add_language_flag, add_model_flags, add_out_flag
from babelforge.eval.published import SYNTAX
from babelforge.eval.results import print_results, results_path, write_run
from babelforge.eval.retrieval.rows import retrieval_rows

COLUMNS = (
    "model",
    "dataset",
    "lang",
    "n_captions",
    "n_images",
    "t2i_r@1",
    "t2i_r@5",
    "i2t_r@1",
    "i2t_r@5",
    "mean_recall",
)

# A run with other models, languages or settings and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.eval_reports>/retrieval.json.
AD_HOC_OUTPUTS = {"out": "retrieval.json"}


@dataclass(frozen=True)
class Config(ImageStageConfig):
    """The `eval.retrieval` group of params.yaml."""

    GROUP = "eval.retrieval"
    # XM3600's caption set is written by the `xm3600` stage (builders/xm3600), from the full profile's fetch only:
    # the sample profile has no copy of it
    caption_sets: list[str] = setting(
        {
            "sample": ["data/raw/xtd/xtd.json", "data/raw/xtd/xflickrco.json"],
            "full": ["data/raw/xtd/xtd.json", "data/raw/xtd/xflickrco.json", "data/xm3600/xm3600.json"],
        },
        "XTD / xFlickrCO-style caption-set JSON files",
    )
    images: str | dict[str, str] = setting(
        {
            "sample": "data/eval/images/captions",
            "full": {
                "xtd": "data/images/coco/train2014",
                "xflickrco": "data/images/xflickrco",
                "xm3600": "data/xm3600_release/images",
            },
        },
        "the caption sets' images: one folder, or {caption set: folder}",
    )
    max_images: int | None = setting(
        {"sample": 100, "full": None}, "first N images of each caption set (null: all)", minimum=1
    )
    languages: list[str] | None = setting(None, "only these languages (null: every language of the caption sets)")
    chunk: int = setting(1024, "queries scored at a time (bounds memory)", minimum=1)
    out: str | None = setting(None, "results JSON (null: <paths.eval_reports>/retrieval.json)")
    dataset: str | None = setting(
        None, f"the captions from a published mt-captions instead of caption_sets: {SYNTAX} (null: caption_sets)"
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_model_flags(parser)
    add_language_flag(parser, "eval.retrieval")
    add_out_flag(parser, "retrieval")
    add_caption_dataset_flags(parser, "eval.retrieval")


def run(config: Config) -> int:

    rows, sources, quarantine, inputs_profile = caption_task_rows(
        config, "retrieval", retrieval_rows, chunk=config.chunk
    )
    write_run(
        "retrieval", rows, config, sources, results_path(config, "retrieval"), quarantine, inputs_profile=inputs_profile
    )
    print_results(rows, COLUMNS)
    return 0


STAGE = Stage(
    "eval_retrieval",
    "text<->image recall@1/5/10 per caption set and language",
    run,
    config=Config,
    configure=configure,
    deps=(
        "${paths.tiny_clip}",
        "${paths.eval_images}/captions",
        "data/raw/xtd/xtd.json",
        "data/raw/xtd/xflickrco.json",
        "${paths.xm3600}",
    ),
    languages=("caption-sets", "xm3600"),
    outs=("${paths.eval_reports}/retrieval.json",),
    pinned=True,
    docs="docs/guides/evaluate.md",
    # runs outside a project too (no params.yaml: its settings' defaults), on a published mt-captions (--dataset).
    standalone=True,
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    run_subject=model_ids,
)
