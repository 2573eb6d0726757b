"""`babelforge mvl_sib_images`: fetch, verify and thumbnail the topic images.

`full` profile: the manifest `mvl_sib.images.manifest` (http(s) URLs, downloaded through
babelforge.core.http). `sample` profile: a deterministic set drawn with PIL is written with
its own manifest (real sha256 of the drawn files) and goes through the same verification.
Output folder (`paths.mvl_sib_images`): `thumbnails/<image_id>.jpg`, `images.parquet`,
and for the sample profile `generated/` (the drawn originals + `manifest.tsv`).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import as_params, from_group
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory, sha256_file, write_table, write_text
from babelforge.core.progress import info, progress
from babelforge.core.provenance import provenance
from babelforge.core.sources import input_record
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.mvl_sib.images import (
    THUMBNAIL_SUFFIX,
    fetch_image,
    generate_sample_set,
    make_thumbnail,
    manifest_text,
    read_manifest,
)
from babelforge.mvl_sib.settings import ImagesSettings


@dataclass(frozen=True)
class Config(ImagesSettings):
    """The `mvl_sib.images` group of params.yaml; writes `paths.mvl_sib_images`."""

    GROUP = "mvl_sib.images"
    profile: str = from_group(str, "profile", "the build profile (sample: a generated set; full: the manifest)")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", dest="profile", choices=("sample", "full"), help="override the params profile")


def build_images(manifest_path, out_dir, *, per_topic: int, thumbnail_px: int, provenance_record: dict):
    """Verify every manifest image into a staging folder, then thumbnail; return the table rows."""

    import pandas as pd

    manifest_path, out_dir = Path(manifest_path), Path(out_dir)
    entries = read_manifest(manifest_path, per_topic=per_topic)
    staging = out_dir / ".fetch"
    staging.mkdir(parents=True, exist_ok=True)
    for entry in progress(entries, desc="fetch images", total=len(entries)):
        fetch_image(entry, staging / entry.image_id, manifest_path.parent, manifest=manifest_path)
    thumbs = out_dir / "thumbnails"
    thumbs.mkdir(exist_ok=True)
    rows = []
    for entry in entries:
        dest = thumbs / f"{entry.image_id}{THUMBNAIL_SUFFIX}"
        try:  # one line naming the manifest line: a small curated source fails on a bad image (no skip)
            width, height = make_thumbnail(staging / entry.image_id, dest, thumbnail_px)
        except BabelforgeError as error:
            message = str(error).removeprefix(f"{staging / entry.image_id}: ")
            raise BabelforgeError(
                f"{manifest_path}:{entry.line}: image {entry.image_id!r} from {entry.url}: {message}; "
                "replace it in the manifest"
            ) from None
        rows.append(
            {
                "topic": entry.topic,
                "image_id": entry.image_id,
                "file": f"{entry.image_id}{THUMBNAIL_SUFFIX}",
                "url": entry.url,
                "licence": entry.licence,
                "attribution": entry.attribution,
                "sha256": entry.sha256,
                "thumbnail_sha256": sha256_file(dest),
                "width": width,
                "height": height,
            }
        )
    for path in staging.iterdir():
        path.unlink()
    staging.rmdir()
    table = pd.DataFrame(rows)
    write_table(table, out_dir / "images.parquet", sort_by=["topic", "image_id"], provenance=provenance_record)
    return table


def run(config: Config) -> int:

    out_dir = Path(config.paths.mvl_sib_images)
    with atomic_directory(out_dir) as tmp:
        if config.profile == "sample":
            generated = tmp / "generated"
            entries = generate_sample_set(generated, per_topic=config.per_topic, seed=config.sample_seed)
            manifest = write_text(manifest_text(entries), generated / "manifest.tsv")
        else:
            manifest = Path(config.manifest)
            if not manifest.is_file():
                raise BabelforgeError(f"{manifest}: no image manifest; set mvl_sib.images.manifest in params.yaml")
        shown = str(manifest.relative_to(tmp)) if manifest.is_relative_to(tmp) else None
        record = provenance(
            "mvl_sib_images",
            {"profile": config.profile, **as_params(config)},
            sources={"manifest": input_record(manifest, config.paths.raw, shown=shown)},
        )
        table = build_images(
            manifest, tmp, per_topic=config.per_topic, thumbnail_px=config.thumbnail_px, provenance_record=record
        )
    info(f"mvl_sib_images: {len(table)} images ({config.profile} profile), {table.topic.nunique()} topics -> {out_dir}")
    return 0


STAGE = Stage(
    "mvl_sib_images",
    "fetch, verify (sha256) and thumbnail the MVL-SIB topic images",
    run,
    config=Config,
    flags={
        "--manifest": ("manifest", "image manifest, full profile"),
        "--out": ("paths.mvl_sib_images", "output folder"),
    },
    configure=configure,
    deps=("${mvl_sib.images.manifest}",),
    outs=("${paths.mvl_sib_images}",),
    docs="docs/datasets/mvl-sib.md",
    owns={
        "mvl_sib_images": ("data/mvl_sib_images", "MVL-SIB topic images"),
    },
)
