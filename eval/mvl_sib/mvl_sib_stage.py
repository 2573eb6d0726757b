"""`babelforge eval_mvl_sib`: MVL-SIB accuracy of a dual encoder per task, k and language."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from babelforge.core.bad_rows import BadRowPolicy
from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_table
from babelforge.core.stages import Stage
from babelforge.eval.config import ImageStageConfig, model_ids
from babelforge.eval.documents import dataset_version
from babelforge.eval.flags import add_language_flag, add_model_flags, add_out_flag
from babelforge.eval.images import IMAGE_SUFFIXES, ImageSet, quarantine_record
from babelforge.eval.inputs import image_cache, load_models, require, usable_images
from babelforge.eval.languages import language_resolver, requested_languages
from babelforge.eval.mvl_sib.rows import mvl_sib_rows
from babelforge.eval.results import print_results, results_path, write_run

COLUMNS = ("model", "mvl_task", "k", "lang", "n", "accuracy")

# A run with other models, languages or settings and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.eval_reports>/mvl_sib.json.
AD_HOC_OUTPUTS = {"out": "mvl_sib.json"}


@dataclass(frozen=True)
class Config(ImageStageConfig):
    """The `eval.mvl_sib` group of params.yaml."""

    GROUP = "eval.mvl_sib"
    images: str = setting("images", "the image folder inside <paths.mvl_sib>")
    configs: list[str] | None = setting(None, "only these <task>_k<k> folders (null: all)")
    languages: list[str] | None = setting(
        {"sample": ["eng_Latn", "deu_Latn", "swh_Latn", "zho_Hans", "arb_Arab"], "full": None},
        "only these languages (null: all)",
    )
    out: str | None = setting(None, "results JSON (null: <paths.eval_reports>/mvl_sib.json)")


class TablesOnDemand(dict):
    """(config, lang) -> the task table's file, read when looked up: at full size the tables of every
    language held at once took most of the stage's 5.5 GB (mvl_sib_rows works one language at a time)."""

    def __getitem__(self, key: tuple[str, str]):
        return read_table(super().__getitem__(key))


def configure(parser: argparse.ArgumentParser) -> None:
    add_model_flags(parser)
    add_language_flag(parser, "eval.mvl_sib")
    add_out_flag(parser, "mvl_sib")


def run(config: Config) -> int:

    with image_cache(config.common, config.runner) as cache:  # a Ray address is asked first
        models = load_models(config.common)  # each one checked before the inputs are read
        root = require(config.paths.mvl_sib, "MVL-SIB folder", "mvl_sib")
        image_root = require(root / config.images, "MVL-SIB image folder", "mvl_sib")
        image_set = ImageSet(
            image_root, tuple(sorted(p.name for p in image_root.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES))
        )
        # Never skipped, whatever eval.common.on_bad_row says: these are the thumbnails of a small curated,
        # checksummed manifest (mvl_sib_images re-encodes each one), so a bad one is a broken build, and
        # leaving it out would drop its instances from every task and language.
        screen_all = BadRowPolicy("skip", 1.0)  # every image screened, then the first bad one named
        image_set, quarantine = usable_images(image_set, config.common, image_root, "eval_mvl_sib", screen_all)
        if quarantine.bad:
            raise BabelforgeError(
                f"{quarantine.bad[0][1].message()}; MVL-SIB's images are a small curated set and never skipped: "
                "rebuild them (dvc repro mvl_sib_images)"
            )
        wanted = requested_languages(config.languages, language_resolver(config.common))
        tables = TablesOnDemand()
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and p != image_root):
            if config.configs is not None and folder.name not in config.configs:
                continue
            for file in sorted(folder.glob("*.parquet")):
                if wanted is None or file.stem in wanted:
                    tables[(folder.name, file.stem)] = file
        if not tables:
            raise BabelforgeError(f"{root}: no <task>_k<k>/<lang>.parquet tables for eval.mvl_sib.configs/languages")
        missing = sorted(set(wanted or ()) - {lang for _, lang in tables})
        if missing:
            raise BabelforgeError(f"eval.mvl_sib.languages: {', '.join(missing)} have no tables under {root}")
        version = dataset_version(root)
        rows = []
        for model in models:
            rows += mvl_sib_rows(model, tables, image_set, cache, seed=config.common.seed, dataset_version=version)
    write_run(
        "mvl_sib",
        rows,
        config,
        {"mvl_sib": version},
        results_path(config, "mvl_sib"),
        quarantine={"mvl_sib": quarantine_record(quarantine)},
    )
    print_results(rows, COLUMNS)
    return 0


STAGE = Stage(
    "eval_mvl_sib",
    "MVL-SIB accuracy per task, k and language",
    run,
    config=Config,
    configure=configure,
    deps=(
        "${paths.tiny_clip}",
        "${paths.mvl_sib}",
    ),
    languages=("mvl-sib",),
    outs=("${paths.eval_reports}/mvl_sib.json",),
    pinned=True,
    docs="docs/guides/evaluate.md",
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    run_subject=model_ids,
)
