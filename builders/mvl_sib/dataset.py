"""The `mvl-sib` dataset: the MVL-SIB task configs per language and the topic images they
refer to. Registered in builders/core/datasets.py; its audit section is builders/mvl_sib/audit_section.py."""

from __future__ import annotations

import functools
from pathlib import Path

from babelforge.core.datasets import AuditSection, DatasetSpec, DatasetTables, Image, LanguageView, LazySplit
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_provenance, read_table
from babelforge.core.licences import Licence, licence_from_text
from babelforge.core.progress import progress

SIB200 = Licence(
    "CC BY-SA 4.0 (SIB-200 / Flores-200 text)", "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"
)
IMAGES_CONFIG = "images"
IMAGES_TABLE = "images.parquet"  # in paths.mvl_sib: image_id, topic, file, url, licence, attribution, ...

MVL_SIB = DatasetSpec(
    name="mvl-sib",
    pretty_name="MVL-SIB",
    summary=(
        "Cross-modal topical matching in the SIB-200 languages: each instance couples a sentence with "
        "same-topic images and sentences and other-topic distractors; one config per task and "
        "language, `<task>_k<k>.<lang>` (images→sentence `i2s`, sentences→image `s2i` with k reference "
        "items, topic→sentence `t2s`, sentences→topic `s2t`), `label` = position of the correct option. "
        "Instances are identical across languages. Tasks name images by `image_id`; the `images` config "
        "holds each topic image once, as an image feature: "
        '`images = load_dataset(repo, "images", split="test")`, then '
        '`by_id = dict(zip(images["image_id"], images["image"]))`.'
    ),
    artifacts=("mvl_sib",),
    read="babelforge.mvl_sib.dataset:read_mvl_sib",
    task_categories=("image-text-to-text", "text-classification"),
    citations=("schmidt-etal-2025-mvlsib", "adelani-etal-2024-sib", "nllb-2022"),
    licences=(("SIB-200 / Flores-200 sentences", SIB200),),
    limitations=(
        "Topics are as unevenly distributed as in SIB-200 (science/technology is the "
        "largest); use the balanced `label` positions, not topic frequency, as chance level.",
    ),
    config_unit="task and language, plus `images`",
    audit=AuditSection(
        key="mvl_sib",
        title="MVL-SIB",
        artifact="mvl_sib",
        reader="babelforge.mvl_sib.audit_section:mvl_sib",
        overview=True,
    ),
)


MVL_SIB_LANGUAGES = LanguageView(
    name="mvl-sib", reads=("${paths.mvl_sib}",), keys="babelforge.mvl_sib.dataset:mvl_sib_languages"
)


def mvl_sib_languages(reads, params) -> list[str]:
    """The languages of the built tasks (`<task>/<lang>.parquet`)."""
    return sorted({path.stem for path in Path(reads[0]).glob("*/*.parquet")})


def read_mvl_sib(paths) -> DatasetTables:
    import pyarrow.parquet as pq

    root = Path(paths.mvl_sib)
    files = sorted(root.glob("*/*.parquet"))
    if not files:
        raise BabelforgeError(f"{root}: MVL-SIB not built (no <task>/<lang>.parquet); run its stage first")
    # One config per task config and language (`i2s_k1.fin_Latn`): the tasks have different
    # columns, and `datasets` casts every split of a config to one schema, so tasks cannot be
    # the splits of a language config.
    tables: dict[str, dict] = {}
    config_languages: dict[str, str | None] = {}
    for path in progress(files, desc="card mvl-sib: count", unit="table"):
        name = f"{path.parent.name}.{path.stem}"
        # 2,000+ tables of 6 million rows in all in a full build: each is read when the card
        # writes it (its rows counted from the Parquet footer here), so the card holds one
        # config's rows at a time, not the dataset's
        tables[name] = {MVL_SIB.split: LazySplit(pq.read_metadata(path).num_rows, functools.partial(task_table, path))}
        config_languages[name] = path.stem
    data = DatasetTables(
        tables, provenance={str(files[0]): read_provenance(files[0])}, config_languages=config_languages
    )
    images_path = root / IMAGES_TABLE
    if not images_path.exists():
        data.limitations.append("Images are referenced by id only: this build has no images.parquet.")
        return data
    images = images_table(images_path)
    tables[IMAGES_CONFIG] = {MVL_SIB.split: images}
    config_languages[IMAGES_CONFIG] = None
    data.features["image"] = Image()
    data.licences = [
        (f"images ({int((images['licence'] == text).sum())})", licence_from_text(text))
        for text in sorted(images["licence"].unique())
    ]
    data.limitations.append(
        f"{len(images)} topic images (thumbnails) are in the `images` config, each with its URL, licence and "
        "attribution; task rows refer to them by `image_id`."
    )
    return data


def task_table(path: Path):
    """One task config's Arrow table as read (a pandas round trip would double the card's time),
    without its schema metadata: the provenance goes into the card once, not into every file."""
    import pyarrow.parquet as pq

    return pq.read_table(path).replace_schema_metadata(None)


def images_table(path: Path):
    """images.parquet with each listed file's bytes in an `image` column ({bytes, path}) instead of `file`."""

    images = read_table(path).sort_values("image_id", kind="stable").reset_index(drop=True)
    cells = []
    for relative in images["file"]:
        source = path.parent / relative
        if not source.exists():
            raise BabelforgeError(f"{source}: listed in {path} but missing; rebuild MVL-SIB")
        cells.append({"bytes": source.read_bytes(), "path": Path(relative).name})
    images = images.drop(columns=["file"])
    images.insert(2, "image", cells)
    return images
