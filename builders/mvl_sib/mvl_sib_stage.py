"""`babelforge mvl_sib`: assemble MVL-SIB for every SIB-200 language.

Reads SIB-200 (`mvl_sib.sib_dir`, validated) and the verified topic images
(`paths.mvl_sib_images`), draws the instances once, and writes into `paths.mvl_sib`:

  instances.parquet                 the language-independent instances (ids only)
  images/<image_id>.jpg, images.parquet   the thumbnails, once, with licence and attribution
  <task>_k<k>/task.json             the English prompt (topics + instruction), once per config
  <task>_k<k>/<lang>.parquet        one row per instance: ids + texts, options, `label`
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from babelforge.core.config import from_group, setting, subgroup
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import (
    atomic_directory,
    read_provenance,
    read_table,
    sha256_file,
    sha256_text,
    write_json,
    write_table,
)
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.sources import input_record
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.mvl_sib.assemble import (
    N_OPTIONS,
    OPTION_LETTERS,
    TASKS,
    SamplingConfig,
    id_positions,
    list_column,
    plan_tasks,
    prompt_text,
    sample_instances,
    shared_columns,
    task_table,
)
from babelforge.mvl_sib.settings import CheckSettings, ImagesSettings
from babelforge.mvl_sib.sib200 import SPLITS, TOPICS, read_corpus

SAMPLING_KEYS = (
    "seed",
    "instances_per_sentence",
    "n_positive_images",
    "n_positive_sentences",
    "n_negatives",
    "sentence_pool",
)


@dataclass(frozen=True)
class Config:
    """The `mvl_sib` group of params.yaml; reads `paths.mvl_sib_images`, writes `paths.mvl_sib`."""

    GROUP = "mvl_sib"
    sib_dir: str = setting("data/raw/sib-200/annotated", "SIB-200 annotated/, as `fetch` lays it out", metavar="DIR")
    languages: str | list[str] = setting(
        "all", "`all` folders under sib_dir, or SIB-200 codes (a list or a comma list)", metavar="CODES"
    )
    seed: int = setting(42, "seed of the instance sampling (the same instances in every language)", minimum=0)
    instances_per_sentence: int = setting(
        3, "instances per SIB-200 sentence (3 x 1,004 = 3,012 rows per task config)", minimum=1
    )
    n_positive_images: int = setting(5, "same-topic images per instance", minimum=1)
    n_positive_sentences: int = setting(4, "further same-topic sentences per instance", minimum=1)
    n_negatives: int = setting(3, "other-topic images and sentences, from distinct other topics", minimum=1)
    sentence_pool: Literal["split", "all"] = setting("split", "co-sentences from the sentence's own split or from all")
    tasks: dict[str, list[int]] = setting(
        {"i2s": [1, 3, 5], "s2i": [1, 3, 5], "t2s": [1], "s2t": [1, 3, 5]},
        "task -> k values (i2s images->sentence, s2i sentences->image, t2s topic->sentence, s2t sentences->topic)",
        minimum=1,
    )
    images: ImagesSettings = subgroup(ImagesSettings, "the mvl_sib_images stage's settings (its own group)")
    check: CheckSettings = subgroup(CheckSettings, "the mvl_sib_check stage's settings (its own group)")
    profile: str = from_group(str, "profile", "the build profile (recorded in the provenance)")
    paths: Paths = stage_paths()


def _languages(value) -> list[str] | None:
    if value in (None, "all"):
        return None
    if isinstance(value, str):
        return [code.strip() for code in value.split(",") if code.strip()]
    return [str(code) for code in value]


def language_sha256(sib_dir, lang: str) -> str:
    """One digest over a language's three split files (its source version)."""

    return sha256_text("".join(sha256_file(sib_dir / lang / f"{split}.tsv") for split in SPLITS))


def instances_table(instances):
    import pyarrow as pa

    return pa.table(
        {
            "instance_id": pa.array(np.arange(len(instances), dtype=np.int32)),
            "sentence_id": pa.array(instances.sentence_id.astype(np.int32)),
            "replicate": pa.array(instances.replicate.astype(np.int8)),
            "split": pa.array(instances.split, type=pa.string()),
            "topic": pa.array(instances.topic, type=pa.string()),
            "positive_image_ids": list_column(instances.positive_images, pa.string()),
            "positive_sentence_ids": list_column(instances.positive_sentences.astype(np.int32), pa.int32()),
            "negative_topics": list_column(instances.negative_topics, pa.string()),
            "negative_image_ids": list_column(instances.negative_images, pa.string()),
            "negative_sentence_ids": list_column(instances.negative_sentences.astype(np.int32), pa.int32()),
        }
    )


def assemble_all(corpus, images, config: Config, out_dir, source_records: dict, progress_desc: str = "mvl_sib"):
    """Draw the instances and write every task config for every language under `out_dir`
    (an empty folder). Returns {config name: rows per language}.

    `corpus` is a validated SibCorpus; `images` the images.parquet table of mvl_sib_images
    plus a `path` column (the thumbnail file to copy); `source_records` holds, for
    provenance, `images_manifest`, `sib200` (the SIB-200 source) and `languages`
    ({lang: {"sha256": ...}}, one digest over each language's files).
    """

    import pyarrow as pa

    out_dir = Path(out_dir)
    sampling = SamplingConfig(**{key: getattr(config, key) for key in SAMPLING_KEYS})
    images_by_topic: dict[str, list[str]] = {}
    for topic, image_id in zip(images["topic"], images["image_id"]):
        images_by_topic.setdefault(topic, []).append(image_id)
    instances = sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, sampling)
    plans = plan_tasks(instances, config.tasks, sampling.seed)
    used_params = {"profile": config.profile, **{key: getattr(config, key) for key in (*SAMPLING_KEYS, "tasks")}}
    shared_sources = {key: value for key, value in source_records.items() if key != "languages"}

    write_table(
        instances_table(instances),
        out_dir / "instances.parquet",
        provenance=provenance("mvl_sib", used_params, shared_sources),
    )
    (out_dir / "images").mkdir()
    for source in images["path"]:
        shutil.copyfile(source, out_dir / "images" / Path(source).name)
    image_table = images.drop(columns=["path"]).assign(file=["images/" + name for name in images["file"]])
    write_table(
        image_table,
        out_dir / "images.parquet",
        sort_by=["topic", "image_id"],
        provenance=provenance("mvl_sib", used_params, shared_sources),
    )

    for plan in plans:
        name, refs, options = TASKS[plan.task]
        write_json(
            {
                "config": plan.name,
                "task": plan.task,
                "task_name": name,
                "k": plan.k,
                "references": refs,
                "options": options,
                "n_options": N_OPTIONS,
                "option_letters": list(OPTION_LETTERS),
                "topics": list(TOPICS),
                "prompt": prompt_text(plan.task, plan.k, TOPICS),
                "label": "0-based position of the correct option",
                "image_files": "images/<image_id>.jpg",
            },
            out_dir / plan.name / "task.json",
        )

    position = id_positions(corpus.ids)
    shared = {plan.name: shared_columns(plan, instances) for plan in plans}
    for lang in progress(corpus.languages, desc=progress_desc, total=len(corpus.languages), unit="lang"):
        texts = pa.array(corpus.texts[lang], type=pa.string())
        record = provenance(
            "mvl_sib",
            used_params,
            {
                **shared_sources,
                "sib200": {
                    **shared_sources["sib200"],
                    "language": lang,
                    "language_sha256": source_records["languages"][lang]["sha256"],
                },
            },
        )
        for plan in plans:
            table = task_table(plan, instances, texts, position, shared[plan.name])
            write_table(table, out_dir / plan.name / f"{lang}.parquet", provenance={**record, "config": plan.name})
    return {plan.name: len(instances) for plan in plans}


def run(config: Config) -> int:

    started = time.perf_counter()
    sib_dir = Path(config.sib_dir)
    images_dir = Path(config.paths.mvl_sib_images)
    out_dir = Path(config.paths.mvl_sib)

    corpus = read_corpus(sib_dir, _languages(config.languages))
    images_table = images_dir / "images.parquet"
    if not images_table.is_file():
        raise BabelforgeError(f"{images_table}: no verified images; run `babelforge mvl_sib_images` first")
    images = read_table(images_table)
    images["path"] = [str(images_dir / "thumbnails" / name) for name in images["file"]]
    manifest = read_provenance(images_table).get("sources", {}).get("manifest", {})
    sources = {
        "images_manifest": manifest,
        "sib200": input_record(sib_dir, config.paths.raw),
        "languages": {lang: {"sha256": language_sha256(sib_dir, lang)} for lang in corpus.languages},
    }
    with atomic_directory(out_dir) as tmp:
        configs = assemble_all(corpus, images, config, tmp, sources)
    info(
        f"mvl_sib: {len(corpus.languages)} languages × {len(configs)} task configs "
        f"({', '.join(configs)}), {next(iter(configs.values()))} rows each -> {out_dir} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0


STAGE = Stage(
    "mvl_sib",
    "assemble MVL-SIB tasks for every SIB-200 language",
    run,
    config=Config,
    flags={
        "--sib200": ("sib_dir", "SIB-200 annotated/ folder"),
        "--images": ("paths.mvl_sib_images", "output of mvl_sib_images"),
        "--out": ("paths.mvl_sib", "output folder"),
        "--language": ("languages", "comma-separated SIB-200 codes"),
    },
    deps=(
        "${mvl_sib.sib_dir}",
        "resources/sources.tsv",  # version and licence of the fetched source, in the provenance
        "${paths.mvl_sib_images}",
    ),
    outs=("${paths.mvl_sib}",),
    docs="docs/datasets/mvl-sib.md",
    owns={
        "mvl_sib": ("data/mvl_sib", "MVL-SIB tasks per language"),
    },
)
