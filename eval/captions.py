"""Caption sets (XTD / xFlickrCO-style JSON), shared by the caption tasks (retrieval, clipscore):
reading them, their images, and every model x caption set of a task."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.eval.documents import dataset_version
from babelforge.eval.images import quarantine_record, read_caption_images
from babelforge.eval.inputs import image_cache, load_models, require, require_images, usable_images
from babelforge.eval.languages import language_resolver, requested_languages


def read_caption_sets(caption_sets: Sequence[str], keep: Callable[[str], bool]) -> list[tuple[str, Path, dict]]:
    """(name, path, {images, captions}) per caption-set JSON, captions only of codes `keep` accepts."""

    sets = []
    for path in caption_sets:
        path = require(path, "caption set", "fetch")
        data = json.loads(path.read_text(encoding="utf-8"))
        captions = {code: caps for code, caps in data["captions"].items() if keep(code)}
        sets.append((path.stem, path, {"images": data["images"], "captions": captions}))
    return sets


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
) -> tuple[list[dict], dict, dict]:
    """Every model x caption set of a caption task (retrieval, clipscore): (rows, sources, quarantine).

    `rows_for(model, image_set, cache, captions, dataset, resolve_lang, seed=, dataset_version=, **options)`.
    Captions of `helper_codes` (clipscore's reference language) are read even when `languages`
    leaves them out; their rows are then dropped. Inputs are checked before any model loads: an
    image no model can read is left out under eval.common.on_bad_row, with its captions in every
    language (`quarantine`: per caption set, the run JSON's record of what was left out).
    """

    resolve = language_resolver(config.common)
    wanted = requested_languages(config.languages, resolve)
    sets = [
        (name, data, dataset_version(path))
        for name, path, data in read_caption_sets(
            config.caption_sets, lambda code: wanted is None or code in helper_codes or resolve(code) in wanted
        )
    ]
    if wanted is not None:
        found = {resolve(code) for _, data, _ in sets for code in data["captions"] if resolve(code) in wanted}
        missing = [lang for lang in wanted if lang not in found]
        if missing:
            raise BabelforgeError(
                f"eval.{task}.languages: {', '.join(missing)} have no captions in {', '.join(config.caption_sets)}"
            )
    image_sets, quarantines = {}, {}
    for name, data, _ in sets:
        listed = caption_image_set(config.images, name, data["images"], config.max_images, f"eval.{task}.images")
        image_sets[name], quarantines[name] = usable_images(listed, config.common, listed.root, f"eval_{task}")
    rows: list[dict] = []
    with image_cache(config.common, config.runner) as cache:
        for model in load_models(config.common):
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
    return rows, sources, {name: quarantine_record(quarantine) for name, quarantine in quarantines.items()}
