"""`babelforge mvl_sib_images`: fetch, verify and thumbnail the topic images.

`full` profile: the manifest `mvl_sib.images.manifest` (http(s) URLs, downloaded through
builders.core.http). `sample` profile: a deterministic set drawn with PIL is written with
its own manifest (real sha256 of the drawn files) and goes through the same verification.
Output folder (`mvl_sib.images.out_dir`): `thumbnails/<image_id>.jpg`, `images.parquet`,
and for the sample profile `generated/` (the drawn originals + `manifest.tsv`).
"""
from __future__ import annotations

import argparse


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", default="params.yaml", help="params file (group mvl_sib.images)")
    parser.add_argument("--profile", choices=("sample", "full"), help="override the params profile")
    parser.add_argument("--manifest", help="override mvl_sib.images.manifest (full profile)")
    parser.add_argument("--out-dir", help="override mvl_sib.images.out_dir")


def build_images(manifest_path, out_dir, *, per_topic: int, thumbnail_px: int, provenance_record: dict):
    """Verify every manifest image into a staging folder, then thumbnail; return the table rows."""
    from pathlib import Path

    import pandas as pd

    from builders.core.io import sha256_file, write_table
    from builders.core.progress import progress
    from builders.mvl_sib.images import THUMBNAIL_SUFFIX, fetch_image, make_thumbnail, read_manifest

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
        width, height = make_thumbnail(staging / entry.image_id, dest, thumbnail_px)
        rows.append({
            "topic": entry.topic, "image_id": entry.image_id, "file": f"{entry.image_id}{THUMBNAIL_SUFFIX}",
            "url": entry.url, "licence": entry.licence, "attribution": entry.attribution,
            "sha256": entry.sha256, "thumbnail_sha256": sha256_file(dest), "width": width, "height": height,
        })
    for path in staging.iterdir():
        path.unlink()
    staging.rmdir()
    table = pd.DataFrame(rows)
    write_table(table, out_dir / "images.parquet", sort_by=["topic", "image_id"], provenance=provenance_record)
    return table


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from builders.core.errors import BabelforgeError
    from builders.core.io import sha256_file, write_text
    from builders.core.progress import info
    from builders.core.provenance import provenance
    from builders.mvl_sib.images import generate_sample_set, manifest_text
    from builders.core.io import atomic_directory
    from builders.mvl_sib.settings import load_settings

    profile, settings = load_settings(args.params)
    profile = args.profile or profile
    images = settings["images"]
    out_dir = Path(args.out_dir or images["out_dir"])
    with atomic_directory(out_dir) as tmp:
        if profile == "sample":
            generated = tmp / "generated"
            entries = generate_sample_set(generated, per_topic=images["per_topic"], seed=images["sample_seed"])
            manifest = write_text(manifest_text(entries), generated / "manifest.tsv")
        else:
            manifest = Path(args.manifest or images["manifest"])
            if not manifest.is_file():
                raise BabelforgeError(f"{manifest}: no image manifest; set mvl_sib.images.manifest in params.yaml")
        record = provenance(
            "mvl_sib_images", {"profile": profile, **images},
            sources={"manifest": {"path": str(manifest.relative_to(tmp)) if manifest.is_relative_to(tmp)
                                  else str(manifest), "sha256": sha256_file(manifest)}},
        )
        table = build_images(manifest, tmp, per_topic=images["per_topic"],
                             thumbnail_px=images["thumbnail_px"], provenance_record=record)
    info(f"mvl_sib_images: {len(table)} images ({profile} profile), {table.topic.nunique()} topics -> {out_dir}")
    return 0
