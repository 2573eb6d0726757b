"""The `xm3600` dataset: the Crossmodal-3600 captions, one config per language. Registered in
builders/core/datasets.py (found from this file); built by `xm3600_fetch` and `xm3600`."""

from __future__ import annotations

from pathlib import Path

from babelforge.core.datasets import DatasetSpec, DatasetTables, LanguageView, Value, artifact_provenance
from babelforge.core.io import read_json, read_table
from babelforge.core.licences import Licence

CAPTIONS_LICENCE = Licence(
    "CC BY 4.0 (captions, by Google LLC)", "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"
)
IMAGES_LICENCE = Licence(
    "CC BY 2.0 (Open Images photographs, not in this dataset; each row gives its image's author, licence and "
    "page, `image_author`, `image_licence`, `image_landing_url`, from the release's image_attributions.csv)",
    "other",
    "https://google.github.io/crossmodal-3600/web-data/image_attributions.csv",
)
CAPTIONS_TABLE = "captions.parquet"  # in paths.xm3600, written by the `xm3600` stage
# per image, beside its id: its attribution (the `xm3600` stage's ATTRIBUTION_COLUMNS), typed even when all null
ATTRIBUTION_FEATURES = {
    column: Value("string") for column in ("image_author", "image_licence", "image_landing_url", "image_title")
}
SKIPPED = "skipped.json"  # in paths.xm3600 instead, when the build had no XM3600 to read

XM3600 = DatasetSpec(
    name="xm3600",
    pretty_name="Crossmodal-3600 (XM3600)",
    summary=(
        "Human-written captions of 3,600 geographically diverse Open Images photographs in 36 languages, "
        "written in each language (not translated); one config per language, one row per image: `image_id` "
        "(the Open Images id; the image is `<image_id>.jpg` in the official images.tgz), `image_locale` (the "
        "language whose region the image was chosen for), `captions` (its captions in the config's "
        "language, usually 2; Bengali 1), `captions_tokenized` (the same, tokenized as released), and the "
        "image's attribution from the release's image_attributions.csv: `image_author`, `image_licence` (a "
        "licence URL, CC BY 2.0), `image_landing_url` (the photograph's Flickr page) and `image_title`."
    ),
    artifacts=("xm3600",),
    read="babelforge.xm3600.dataset:read_xm3600",
    task_categories=("image-to-text", "text-to-image"),
    citations=("thapliyal-etal-2022-xm3600",),
    licences=(("captions", CAPTIONS_LICENCE), ("images", IMAGES_LICENCE)),
    limitations=(
        "The images are not part of this dataset: download images.tgz from the official page. They are "
        "CC BY 2.0, which requires attribution: each row carries its image's author and licence "
        "(`image_author`, `image_licence`, with its page and title) from the release's image_attributions.csv; "
        "give them wherever an image is shown.",
        "3,600 images only: a test set, with no training split.",
    ),
    tags=("multilingual", "image-captioning", "image-text-retrieval"),
)


XM3600_LANGUAGES = LanguageView(
    name="xm3600", reads=("${paths.xm3600}",), keys="babelforge.xm3600.dataset:xm3600_languages"
)


def xm3600_languages(reads, params) -> list[str]:
    """The languages of the built captions (none when the build skipped XM3600)."""
    folder = Path(reads[0])
    if (folder / SKIPPED).is_file():
        return []
    return sorted(set(read_table(folder / CAPTIONS_TABLE, columns=["lang"])["lang"]))


def read_xm3600(paths) -> DatasetTables:
    folder = Path(paths.xm3600)
    skipped = folder / SKIPPED
    if skipped.is_file():
        return DatasetTables({}, skipped=read_json(skipped)["skipped"])
    path = folder / CAPTIONS_TABLE
    record = artifact_provenance(path, "XM3600 captions")
    captions = read_table(path)
    tables = {lang: {XM3600.split: per_image(part)} for lang, part in captions.groupby("lang", sort=True)}
    absent = [column for column in ATTRIBUTION_FEATURES if column not in captions.columns]
    limitations = [UNATTRIBUTED.format(path=path, columns=", ".join(absent))] if absent else []
    return DatasetTables(
        tables,
        provenance={str(path): record},
        sort_by=("image_id",),
        features=dict(ATTRIBUTION_FEATURES),
        limitations=limitations,
    )


# said on a card made from captions built before the rows carried their image's attribution
UNATTRIBUTED = (
    "This build's rows carry no {columns} ({path} was built before the rows carried their image's "
    "attribution): rebuild it with `babelforge xm3600` before publishing, CC BY 2.0 requires the attribution."
)


def per_image(captions):
    """One language's caption rows as one row per image: its id, locale, captions in caption order and
    its attribution (the same on each of its caption rows)."""
    attribution = [column for column in ATTRIBUTION_FEATURES if column in captions.columns]
    images = (
        captions.sort_values(["image_id", "caption_index"], kind="stable")
        .groupby(["image_id", "image_locale"], sort=True)
        .agg(
            captions=("caption", list),
            captions_tokenized=("caption_tokenized", list),
            **{column: (column, _first) for column in attribution},
        )
        .reset_index()
    )
    return images


def _first(values):
    """An image's value of a per-image column (as stored: a null stays None, never NaN)."""
    return values.iloc[0]
