"""`babelforge mvl_sib`: assemble MVL-SIB for every SIB-200 language.

Reads SIB-200 (`mvl_sib.sib_dir`, validated) and the verified topic images
(`mvl_sib.images.out_dir`), draws the instances once, and writes into `mvl_sib.out_dir`:

  instances.parquet                 the language-independent instances (ids only)
  images/<image_id>.jpg, images.parquet   the thumbnails, once, with licence and attribution
  <task>_k<k>/task.json             the English prompt (topics + instruction), once per config
  <task>_k<k>/<lang>.parquet        one row per instance: ids + texts, options, `label`
"""
from __future__ import annotations

import argparse

SAMPLING_KEYS = ("seed", "instances_per_sentence", "n_positive_images", "n_positive_sentences",
                 "n_negatives", "sentence_pool")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default="params.yaml", help="params file (group mvl_sib)")
    parser.add_argument("--sib-dir", help="override mvl_sib.sib_dir (SIB-200 annotated/ folder)")
    parser.add_argument("--images-dir", help="override mvl_sib.images.out_dir (output of mvl_sib_images)")
    parser.add_argument("--out-dir", help="override mvl_sib.out_dir")
    parser.add_argument("--languages", help="comma-separated SIB-200 codes (default: mvl_sib.languages)")


def _languages(value) -> list[str] | None:
    if value in (None, "all"):
        return None
    if isinstance(value, str):
        return [code.strip() for code in value.split(",") if code.strip()]
    return [str(code) for code in value]


def language_sha256(sib_dir, lang: str) -> str:
    """One digest over a language's three split files (its source version)."""
    from builders.core.io import sha256_file, sha256_text
    from builders.mvl_sib.sib200 import SPLITS

    return sha256_text("".join(sha256_file(sib_dir / lang / f"{split}.tsv") for split in SPLITS))


def instances_table(instances):
    import numpy as np
    import pyarrow as pa

    from builders.mvl_sib.assemble import list_column

    return pa.table({
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
    })


def assemble_all(corpus, images, settings: dict, out_dir, source_records: dict, progress_desc: str = "mvl_sib"):
    """Draw the instances and write every task config for every language under `out_dir`
    (an empty folder). Returns {config name: rows per language}.

    `corpus` is a validated SibCorpus; `images` the images.parquet table of mvl_sib_images
    plus a `path` column (the thumbnail file to copy); `source_records` holds
    `images_manifest` and `languages` ({lang: {"sha256": ...}}) for provenance.
    """
    import shutil
    from pathlib import Path

    import pyarrow as pa

    from builders.core.io import write_json, write_table
    from builders.core.progress import progress
    from builders.core.provenance import provenance
    from builders.mvl_sib.assemble import (
        N_OPTIONS, OPTION_LETTERS, TASKS, SamplingConfig, id_positions, plan_tasks, prompt_text,
        sample_instances, shared_columns, task_table,
    )
    from builders.mvl_sib.sib200 import TOPICS

    out_dir = Path(out_dir)
    config = SamplingConfig(**{key: settings[key] for key in SAMPLING_KEYS})
    images_by_topic: dict[str, list[str]] = {}
    for topic, image_id in zip(images["topic"], images["image_id"]):
        images_by_topic.setdefault(topic, []).append(image_id)
    instances = sample_instances(corpus.ids, corpus.splits, corpus.topics, images_by_topic, config)
    plans = plan_tasks(instances, settings["tasks"], config.seed)
    used_params = {key: settings[key] for key in (*SAMPLING_KEYS, "tasks")}
    shared_sources = {key: value for key, value in source_records.items() if key != "languages"}

    write_table(instances_table(instances), out_dir / "instances.parquet",
                provenance=provenance("mvl_sib", used_params, shared_sources))
    (out_dir / "images").mkdir()
    for source in images["path"]:
        shutil.copyfile(source, out_dir / "images" / Path(source).name)
    image_table = images.drop(columns=["path"]).assign(file=["images/" + name for name in images["file"]])
    write_table(image_table, out_dir / "images.parquet", sort_by=["topic", "image_id"],
                provenance=provenance("mvl_sib", used_params, shared_sources))

    for plan in plans:
        name, refs, options = TASKS[plan.task]
        write_json({
            "config": plan.name, "task": plan.task, "task_name": name, "k": plan.k,
            "references": refs, "options": options, "n_options": N_OPTIONS,
            "option_letters": list(OPTION_LETTERS), "topics": list(TOPICS),
            "prompt": prompt_text(plan.task, plan.k, TOPICS),
            "label": "0-based position of the correct option",
            "image_files": "images/<image_id>.jpg",
        }, out_dir / plan.name / "task.json")

    position = id_positions(corpus.ids)
    shared = {plan.name: shared_columns(plan, instances) for plan in plans}
    for lang in progress(corpus.languages, desc=progress_desc, total=len(corpus.languages), unit="lang"):
        texts = pa.array(corpus.texts[lang], type=pa.string())
        record = provenance(
            "mvl_sib", used_params,
            {**shared_sources, "sib200": {**source_records["languages"][lang], "language": lang}},
        )
        for plan in plans:
            table = task_table(plan, instances, texts, position, shared[plan.name])
            write_table(table, out_dir / plan.name / f"{lang}.parquet",
                        provenance={**record, "config": plan.name})
    return {plan.name: len(instances) for plan in plans}


def run(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from builders.core.errors import BabelforgeError
    from builders.core.io import read_provenance, read_table
    from builders.core.progress import info
    from builders.core.io import atomic_directory
    from builders.mvl_sib.settings import load_settings
    from builders.mvl_sib.sib200 import read_corpus

    started = time.perf_counter()
    _, settings = load_settings(args.params)
    sib_dir = Path(args.sib_dir or settings["sib_dir"])
    images_dir = Path(args.images_dir or settings["images"]["out_dir"])
    out_dir = Path(args.out_dir or settings["out_dir"])
    languages = _languages(args.languages if args.languages is not None else settings["languages"])

    corpus = read_corpus(sib_dir, languages)
    images_table = images_dir / "images.parquet"
    if not images_table.is_file():
        raise BabelforgeError(f"{images_table}: no verified images; run `babelforge mvl_sib_images` first")
    images = read_table(images_table)
    images["path"] = [str(images_dir / "thumbnails" / name) for name in images["file"]]
    manifest = read_provenance(images_table).get("sources", {}).get("manifest", {})
    sources = {
        "images_manifest": manifest,
        "languages": {lang: {"sha256": language_sha256(sib_dir, lang)} for lang in corpus.languages},
    }
    with atomic_directory(out_dir) as tmp:
        configs = assemble_all(corpus, images, settings, tmp, sources)
    info(
        f"mvl_sib: {len(corpus.languages)} languages × {len(configs)} task configs "
        f"({', '.join(configs)}), {next(iter(configs.values()))} rows each -> {out_dir} "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return 0
