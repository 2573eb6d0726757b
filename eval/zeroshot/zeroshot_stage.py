"""`babelforge eval_zeroshot`: Babel-ImageNet zero-shot classification per language."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.babel_imagenet.prompts import read_templates
from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_table
from babelforge.core.progress import info
from babelforge.core.provenance import build_profile
from babelforge.core.stages import Stage
from babelforge.eval.config import ImageStageConfig, model_ids
from babelforge.eval.documents import dataset_version
from babelforge.eval.flags import add_language_flag, add_model_flags, add_out_flag
from babelforge.eval.images import quarantine_record, read_classification_set
from babelforge.eval.inputs import image_cache, imagenet_classes, load_models, require, require_images, usable_images
from babelforge.eval.labels import ENGLISH_TEMPLATES, labels_by_language, select_languages, translated_templates
from babelforge.eval.languages import language_resolver, requested_languages
from babelforge.eval.published import SYNTAX, PublishedDataset, add_dataset_flag, card_table, open_dataset
from babelforge.eval.results import print_results, results_path, write_run
from babelforge.eval.zeroshot.rows import zeroshot_rows

COLUMNS = (
    "model",
    "lang",
    "prompt_set",
    "n_classes",
    "n_images",
    "top1",
    "chance_top1",
    "top1_norm",
    "top5",
    "balanced_accuracy",
    "top1_100",
)

# A run with other models, languages or settings and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.eval_reports>/zeroshot.json.
AD_HOC_OUTPUTS = {"out": "zeroshot.json"}
# what a published babel-imagenet (--dataset) and babel-imagenet-prompts (--prompts-dataset) hold
LABEL_COLUMNS = ("class_idx", "label")
PROMPT_COLUMNS = ("template_id", "text")


@dataclass(frozen=True)
class Config(ImageStageConfig):
    """The `eval.zeroshot` group of params.yaml."""

    GROUP = "eval.zeroshot"
    images: str = setting(
        {"sample": "data/eval/images/imagenet", "full": "data/imagenet/val"},
        "an ImageNet-style folder (<wnid>/<file>) or a TSV list (path<TAB>class_idx)",
        metavar="DIR",
    )
    languages: list[str] | None = setting(None, "only these languages (null: every language with labels)")
    prompt_sets: list[Literal["translated", "english", "label"]] = setting(
        ["translated"], "prompt sets to evaluate: translated | english | label"
    )
    fallback: Literal["english", "label", "both"] = setting(
        "english", "for languages without translated prompts: english | label | both (one row each)"
    )
    knowledge: bool = setting(False, "append each class's WordNet definition (ELEVATER-style)")
    max_templates: int | None = setting({"sample": 2, "full": None}, "first N templates only (null: all 80)", minimum=1)
    drop_duplicate_labels: bool = setting(False, "leave out labels flagged is_duplicate")
    control_classes: int = setting(100, "classes of the fixed-size control (top1_100)", minimum=1)
    control_repeats: int = setting(10, "seeded class subsets averaged in the control", minimum=1)
    english_templates: str | None = setting(
        None, "English CLIP templates, one per line (null: resources/clip_templates_en.txt)"
    )
    out: str | None = setting(None, "results JSON (null: <paths.eval_reports>/zeroshot.json)")
    dataset: str | None = setting(
        None, f"the labels from a published babel-imagenet instead of paths.labels: {SYNTAX} (null: paths.labels)"
    )
    prompts_dataset: str | None = setting(
        None,
        f"with `dataset`: the translated prompts from a published babel-imagenet-prompts, {SYNTAX} "
        "(null: every language takes eval.zeroshot.fallback)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_model_flags(parser)
    add_language_flag(parser, "eval.zeroshot")
    add_out_flag(parser, "zeroshot")
    add_dataset_flag(parser, "babel-imagenet", "eval.zeroshot.dataset")
    parser.add_argument(
        "--prompts-dataset",
        dest="prompts_dataset",
        metavar="DIR",
        help=f"with --dataset: its babel-imagenet-prompts, {SYNTAX} (eval.zeroshot.prompts_dataset)",
    )


def run(config: Config) -> int:

    paths = config.paths
    wanted = requested_languages(config.languages, language_resolver(config.common))
    if config.prompts_dataset and not config.dataset:
        raise BabelforgeError("eval.zeroshot.prompts_dataset (--prompts-dataset) goes with a dataset (--dataset)")
    with image_cache(config.common, config.runner) as cache:  # a Ray address is asked first
        models = load_models(config.common)  # each one checked before the inputs are read
        datasets = [open_dataset(spec) for spec in (config.dataset, config.prompts_dataset) if spec]
        if datasets:
            labels, translated, sources = published_inputs(datasets, wanted, config.drop_duplicate_labels)
        else:
            labels_path = require(paths.labels, "labels table", "labels")
            labels = labels_by_language(read_table(labels_path), config.drop_duplicate_labels)
            labels = select_languages(labels, wanted, str(labels_path))
            prompts_path = Path(paths.prompts)
            translated = translated_templates(read_table(prompts_path)) if prompts_path.exists() else {}
            if not prompts_path.exists():
                info(f"eval_zeroshot: no {prompts_path}; every language uses the {config.fallback} fallback")
            sources = {"labels": dataset_version(labels_path), "prompts": dataset_version(prompts_path)}
        english = read_templates(require(config.english_templates or ENGLISH_TEMPLATES, "template list", "prompts"))
        knowledge = None
        if config.knowledge:
            table = read_table(require(paths.wordnet, "WordNet table", "wordnet"))
            knowledge = {int(c): str(d) for c, d in zip(table["class_idx"], table["definition"]) if d}
        image_set = read_classification_set(
            require_images(config.images, "eval.zeroshot.images"), {wnid: idx for idx, wnid in imagenet_classes()}
        )
        # the images no model can read are left out (eval.common.on_bad_row), the same for every model
        image_set, quarantine = usable_images(image_set, config.common, config.images, "eval_zeroshot")
        image_set_hash = image_set.content_hash()
        labels_version = sources["labels"]
        rows = []
        for model in models:
            rows += zeroshot_rows(
                model,
                image_set,
                cache,
                labels,
                english,
                translated,
                prompt_sets=config.prompt_sets,
                fallback=config.fallback,
                knowledge=knowledge,
                max_templates=config.max_templates,
                control_classes=config.control_classes,
                control_repeats=config.control_repeats,
                seed=config.common.seed,
                dataset_version=labels_version,
                image_set_hash=image_set_hash,
            )
            info(
                f"eval_zeroshot: {model.name} done ({len(labels)} languages; image cache hits {cache.hits}, "
                f"misses {cache.misses}, images encoded {cache.encoded_images})"
            )
    write_run(
        "zeroshot",
        rows,
        config,
        {**sources, "images": "sha256:" + image_set_hash},
        results_path(config, "zeroshot"),
        quarantine={"babel_imagenet": quarantine_record(quarantine)},
        inputs_profile=build_profile({"build": {"profile": dataset.profile}} for dataset in datasets),
    )
    print_results(rows, COLUMNS)
    return 0


def published_inputs(
    datasets: list[PublishedDataset], wanted: list[str] | None, drop_duplicates: bool
) -> tuple[dict, dict, dict]:
    """(labels, translated templates, sources) from a published babel-imagenet and, when given, its
    babel-imagenet-prompts: the configs of the languages asked for, turned into what the built
    tables give (babelforge.eval.labels)."""
    labels_set, prompts_set = (datasets + [None])[:2]
    table = card_table(
        labels_set, [lang for lang in wanted if lang in labels_set.configs] if wanted else None, LABEL_COLUMNS
    )
    labels = select_languages(labels_by_language(table, drop_duplicates), wanted, labels_set.spec)
    sources = {"labels": labels_set.version}
    translated = {}
    if prompts_set is None:
        info("eval_zeroshot: no prompts dataset (--prompts-dataset); every language takes the fallback")
    else:
        table = card_table(prompts_set, sorted(set(labels) & set(prompts_set.configs)), PROMPT_COLUMNS)
        translated = translated_templates(table)
        sources["prompts"] = prompts_set.version
    for dataset in datasets:
        info(f"eval_zeroshot: {dataset.spec} -> {dataset.version}" + (" (a SAMPLE build)" if dataset.sample else ""))
    return labels, translated, sources


STAGE = Stage(
    "eval_zeroshot",
    "Babel-ImageNet zero-shot classification per language",
    run,
    config=Config,
    flags={
        "--labels": ("paths.labels", "labels.parquet"),
        "--prompts": ("paths.prompts", "prompts.parquet"),
        "--images": ("images", "an ImageNet-style folder <wnid>/<file>, or a TSV list path<TAB>class_idx"),
    },
    configure=configure,
    deps=(
        "${paths.tiny_clip}",
        "${paths.eval_images}/imagenet",
        "${paths.labels}",
        "${paths.prompts}",
        "${paths.wordnet}",
        "resources/clip_templates_en.txt",
    ),
    languages=("babel-imagenet",),
    outs=("${paths.eval_reports}/zeroshot.json",),
    pinned=True,
    docs="docs/guides/evaluate.md",
    # runs outside a project too (no params.yaml: its settings' defaults), on a published dataset (--dataset).
    standalone=True,
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    run_subject=model_ids,
)
