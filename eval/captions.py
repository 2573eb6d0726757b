"""Caption sets (XTD / xFlickrCO-style JSON), shared by the caption tasks (retrieval, clipscore):
reading them, their images, and every model x caption set of a task.

A published mt-captions card (`--dataset`, babelforge.eval.published) is one more caption set:
its rows become the same {images, captions} structure (`caption_set_from_rows`), scored by the
same code as a caption-set file."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from babelforge.captions.formats.xtd import read_caption_document
from babelforge.core.bad_rows import FAIL_FAST, BadRowPolicy, Quarantine, screen_caption_lists, summary_line
from babelforge.core.errors import BabelforgeError
from babelforge.core.progress import info
from babelforge.eval.documents import dataset_version
from babelforge.eval.images import quarantine_record, read_caption_images
from babelforge.eval.inputs import image_cache, load_models, require, require_images, usable_images
from babelforge.eval.languages import language_resolver, requested_languages
from babelforge.eval.published import PublishedDataset, add_dataset_flag, card_table, open_dataset

# An mt-captions card's columns a caption set is made of; its English source captions take the
# code the caption sets give English (it resolves to eng_Latn), so retrieval and RefCLIP-S
# (eval.clipscore.reference_lang, `en` by default) have English too.
CARD_COLUMNS = ("caption_id", "image", "caption", "text")
ENGLISH = "en"


def read_caption_sets(
    caption_sets: Sequence[str], keep: Callable[[str], bool], policy: BadRowPolicy = FAIL_FAST, task: str = "retrieval"
) -> list[tuple[str, Path, dict, Quarantine]]:
    """(name, path, {images, captions}, quarantine) per caption-set JSON, captions only of codes
    `keep` accepts. A caption that cannot be scored (null, a number, empty, a NUL, bytes that are not
    UTF-8) is left out under `policy` (eval.common's on_bad_row / max_bad_fraction) and counted in
    the set's quarantine, as the captions input counts it (`screen_caption_lists`); a file that is
    not JSON, or whose captions do not line up with its images, is one line."""

    sets = []
    for path in caption_sets:
        path = require(path, "caption set", "fetch")
        images, by_code = read_caption_document(path, f"eval.{task}.caption_sets")
        quarantine = Quarantine(policy, "captions", hint="check the caption set file (the right one, in UTF-8?)")
        captions = {
            code: [
                [text for text in texts if text is not None]
                for texts in screen_caption_lists(caps, f"{path} [{code}]", quarantine)
            ]
            for code, caps in by_code.items()
            if keep(code)
        }
        quarantine.check_fraction()
        info(f"eval_{task}: {path}: {summary_line('captions', quarantine.summary())}")
        sets.append((path.stem, path, {"images": images, "captions": captions}, quarantine))
    return sets


def caption_set_from_rows(rows) -> dict:
    """An mt-captions card's rows (a DataFrame or dicts with caption_id, image, caption, text and
    `lang`, the config) -> a caption set {"images": [...], "captions": {code: [[caption, ...] per image]}}.

    Images in the order of their first caption (by caption_id); the English source captions under
    `ENGLISH`, once per caption_id; each language's translations under its config name, in
    caption_id order, those it kept none of (`text` null) left out, so an image can have none.
    """
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    records = sorted(records, key=lambda row: row["caption_id"])
    images: dict[str, int] = {}
    english: list[list[str]] = []
    translations: dict[str, dict[int, list[str]]] = {}
    seen = set()
    for row in records:
        image = row["image"]
        if not isinstance(image, str) or not image:
            raise BabelforgeError(f"caption {row['caption_id']} ({row['lang']}): no image file name")
        index = images.setdefault(image, len(images))
        if index == len(english):
            english.append([])
        if row["caption_id"] not in seen and isinstance(row["caption"], str):
            seen.add(row["caption_id"])
            english[index].append(row["caption"])
        per_image = translations.setdefault(str(row["lang"]), {})
        if isinstance(row["text"], str):
            per_image.setdefault(index, []).append(row["text"])
    captions = {ENGLISH: english} if records else {}
    for lang, per_image in sorted(translations.items()):
        captions[lang] = [per_image.get(index, []) for index in range(len(images))]
    return {"images": list(images), "captions": captions}


def card_caption_set(dataset: PublishedDataset, keep: Callable[[str], bool], task: str) -> tuple[str, dict, str]:
    """(name, {images, captions}, version) of a published mt-captions card: the configs of the
    languages `keep` accepts (the first alone when only English is asked for: every config has the
    English source captions), captions only of codes `keep` accepts."""
    configs = [name for name in dataset.configs if keep(name)] or list(dataset.configs[:1])
    data = caption_set_from_rows(card_table(dataset, configs, CARD_COLUMNS))
    data["captions"] = {code: caps for code, caps in data["captions"].items() if keep(code)}
    info(f"eval_{task}: {dataset.spec} -> {dataset.version}" + (" (a SAMPLE build)" if dataset.sample else ""))
    return dataset.name, data, dataset.version


def caption_image_set(
    images: str | Mapping[str, str], dataset: str, names: Sequence[str], max_images: int | None, setting_name: str
):
    """The images of caption set `dataset`: `images` is one folder, or {caption set: folder}."""

    folder = images
    if not isinstance(folder, str):
        if dataset not in folder:
            raise BabelforgeError(
                f"params.yaml {setting_name}: no image folder for caption set {dataset!r} (has: {', '.join(folder)})"
            )
        folder = folder[dataset]
    return read_caption_images(
        require_images(folder, setting_name), names[:max_images] if max_images else names, setting_name
    )


def kept_captions(
    captions_by_lang: Mapping[str, Sequence[Sequence[str]]], positions: Sequence[int] | None
) -> dict[str, list]:
    """Each language's per-image caption lists for the images at `positions` (the images a screening
    kept, in order): the captions of a left-out image leave with it, in every language."""
    if positions is None:
        return {code: list(captions) for code, captions in captions_by_lang.items()}
    return {code: [captions[i] for i in positions if i < len(captions)] for code, captions in captions_by_lang.items()}


def caption_task_rows(
    config, task: str, rows_for: Callable, helper_codes: Sequence[str] = (), **options
) -> tuple[list[dict], dict, dict, str | None]:
    """Every model x caption set of a caption task (retrieval, clipscore): (rows, sources, quarantine,
    inputs profile: `sample` when a published dataset read is a sample build).

    `rows_for(model, image_set, cache, captions, dataset, resolve_lang, seed=, dataset_version=, **options)`.
    Captions of `helper_codes` (clipscore's reference language) are read even when `languages`
    leaves them out; their rows are then dropped. A Ray address is asked first, then every model is
    loaded and checked (`load_models`), then the inputs are read. An image no model can read is left
    out under eval.common.on_bad_row, with its captions in every language (`quarantine`: per caption
    set, the run JSON's record of what was left out, with the
    captions left out under the same policy in its `captions` entry). With
    `config.dataset` (a published mt-captions card) that card is the one caption set.
    """

    resolve = language_resolver(config.common)
    wanted = requested_languages(config.languages, resolve)

    def keep(code: str) -> bool:
        return wanted is None or code in helper_codes or resolve(code) in wanted

    with image_cache(config.common, config.runner) as cache:  # a Ray address is asked first
        models = load_models(config.common)  # each one checked before the inputs are read
        published = open_dataset(config.dataset) if config.dataset else None
        caption_quarantines: dict[str, Quarantine] = {}
        if published:
            sets = [card_caption_set(published, keep, task)]
        else:
            sets = []
            for name, path, data, caption_quarantine in read_caption_sets(
                config.caption_sets, keep, config.common.image_policy, task
            ):
                sets.append((name, data, dataset_version(path)))
                caption_quarantines[name] = caption_quarantine
        if wanted is not None:
            found = {resolve(code) for _, data, _ in sets for code in data["captions"] if resolve(code) in wanted}
            missing = [lang for lang in wanted if lang not in found]
            if missing:
                read = published.spec if published else ", ".join(config.caption_sets)
                raise BabelforgeError(f"eval.{task}.languages: {', '.join(missing)} have no captions in {read}")
        image_sets, quarantines = {}, {}
        for name, data, _ in sets:
            listed = caption_image_set(config.images, name, data["images"], config.max_images, f"eval.{task}.images")
            image_sets[name], quarantines[name] = usable_images(listed, config.common, listed.root, f"eval_{task}")
        rows: list[dict] = []
        for model in models:
            for name, data, version in sets:
                rows += rows_for(
                    model,
                    image_sets[name],
                    cache,
                    kept_captions(data["captions"], image_sets[name].positions),
                    name,
                    resolve,
                    seed=config.common.seed,
                    dataset_version=version,
                    **options,
                )
    if wanted is not None:
        rows = [row for row in rows if row["lang"] in wanted]
    sources = {name: version for name, _, version in sets}
    quarantine = {name: quarantine_record(quarantine) for name, quarantine in quarantines.items()}
    for name, caption_quarantine in caption_quarantines.items():  # beside the images': merge.py reads those
        quarantine[name]["captions"] = quarantine_record(caption_quarantine)
    return rows, sources, quarantine, published.profile if published else None


def add_caption_dataset_flags(parser: argparse.ArgumentParser, group: str) -> None:
    """`--dataset` (a published mt-captions instead of the caption-set files) and `--images` (its images)."""
    add_dataset_flag(parser, "mt-captions", f"{group}.dataset")
    parser.add_argument(
        "--images",
        dest="images",
        metavar="DIR",
        help=f"the caption set's image folder, the files its `image` column names ({group}.images)",
    )
