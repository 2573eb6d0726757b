"""Topic images: the manifest, fetching with checksum verification, thumbnails, and the
generated offline image set of the `sample` profile.

Manifest (TSV, header required): `topic, image_id, url, licence, attribution, sha256`,
10 images per SIB-200 topic. `url` is http(s) (downloaded through `babelforge.core.http`)
or a path relative to the manifest's folder (a local mirror, or the generated set).
Every file is verified against its sha256 before anything is written: a mismatch stops
the stage and keeps nothing.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from babelforge.core.errors import BabelforgeError
from babelforge.core.http import ChecksumMismatchError, download
from babelforge.core.images import read_rgb
from babelforge.core.io import sha256_file
from babelforge.core.tsv import SHA256, Check, TsvSpec, one_of, read_tsv
from babelforge.mvl_sib.sib200 import TOPICS

MANIFEST_COLUMNS = ["topic", "image_id", "url", "licence", "attribution", "sha256"]
IMAGE_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
THUMBNAIL_SUFFIX = ".jpg"
JPEG_QUALITY = 90


@dataclass(frozen=True)
class ImageEntry:
    topic: str
    image_id: str
    url: str
    licence: str
    attribution: str
    sha256: str
    line: int = 0  # manifest line, for error messages


def topic_slug(topic: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")


def manifest_table(topics: Sequence[str] = TOPICS) -> TsvSpec:
    """The manifest's columns and value checks (written by `csv.writer`, so fields may be quoted)."""
    return TsvSpec(
        tuple(MANIFEST_COLUMNS),
        required=tuple(MANIFEST_COLUMNS),
        unique=(("image_id",),),
        checks={
            "topic": one_of(*topics),
            "image_id": Check(
                lambda value: IMAGE_ID_PATTERN.match(value) is not None, "lower-case letters, digits, - or _"
            ),
            "sha256": SHA256,
        },
        quoted=True,
    )


def read_manifest(path: str | Path, per_topic: int = 10, topics: Sequence[str] = TOPICS) -> list[ImageEntry]:
    """Read and validate a manifest; an error names the file and line of the first problem."""
    path = Path(path)
    if not path.is_file():
        raise BabelforgeError(f"{path}: no image manifest; set mvl_sib.images.manifest in params.yaml")
    entries = [ImageEntry(**row, line=line) for line, row in read_tsv(path, manifest_table(topics))]
    for topic in topics:
        count = sum(entry.topic == topic for entry in entries)
        if count != per_topic:
            raise BabelforgeError(
                f"{path}: topic {topic!r} has {count} images, {per_topic} required "
                "(curate the manifest: url, licence, attribution and sha256 per image)"
            )
    return entries


def manifest_text(entries: Sequence[ImageEntry]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(MANIFEST_COLUMNS)
    for entry in entries:
        writer.writerow([entry.topic, entry.image_id, entry.url, entry.licence, entry.attribution, entry.sha256])
    return buffer.getvalue()


def _refuse(entry: ImageEntry, manifest: Path | str, actual: str) -> BabelforgeError:
    # a manifest written from a Hub release (its URLs resolve at one commit) is re-pinned as a whole
    release = re.search(r"/datasets/([^/]+/[^/]+)/resolve/[0-9a-f]{40}/", entry.url)
    fix = (
        f"check the release, then `babelforge pins --update --accept hub-dataset:{release[1]}` rewrites the manifest"
        if release
        else "Fix the manifest or the source"
    )
    return BabelforgeError(
        f"{manifest}:{entry.line}: image {entry.image_id!r} from {entry.url} has sha256 {actual}, "
        f"manifest says {entry.sha256}; refusing it (nothing kept). {fix}"
    )


def fetch_image(entry: ImageEntry, dest: Path, base_dir: Path, manifest: Path | str = "manifest") -> None:
    """Put the image of `entry` at `dest` and verify its sha256; on mismatch delete it and stop.

    http(s) URLs go through `babelforge.core.http.download` (retries, resume, checksum, atomic
    rename); any failure is reported with the manifest line of the image.
    """
    if entry.url.startswith(("http://", "https://")):
        try:
            download(entry.url, dest, entry.sha256)
        except ChecksumMismatchError as error:
            raise _refuse(entry, manifest, error.actual) from None
        except BabelforgeError as error:
            raise BabelforgeError(f"{manifest}:{entry.line}: image {entry.image_id!r}: {error}") from None
    else:
        source = base_dir / entry.url.removeprefix("file:")
        if not source.is_file():
            raise BabelforgeError(f"{manifest}:{entry.line}: image {entry.image_id!r} not found at {source}")
        shutil.copyfile(source, dest)
    actual = sha256_file(dest)
    if actual != entry.sha256:
        dest.unlink(missing_ok=True)
        raise _refuse(entry, manifest, actual)


def make_thumbnail(source: Path, dest: Path, max_side: int = 640) -> tuple[int, int]:
    """Deterministic JPEG of `source`, at most `max_side` px on the long side (LANCZOS).

    Opened by `babelforge.core.images.read_rgb`, the eval image sets' reader: EXIF orientation
    applied, CMYK / palette / 16-bit converted, transparency on white; then all metadata dropped.
    Smaller images are not enlarged. Returns (width, height) of the thumbnail. An image it cannot
    read stops the stage (one line with the reason): the manifest is a small curated source, so
    there is no skip policy here (babelforge.core.bad_rows).
    """

    image = read_rgb(source)
    width, height = image.size
    scale = max_side / max(width, height)
    if scale < 1:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    image.save(dest, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False, subsampling="4:2:0")
    return image.size


# --- the generated sample set --------------------------------------------------------

# Per topic: a background colour, a foreground colour and a motif, so images of one topic
# look alike and images of different topics do not (a tiny CLIP can tell them apart).
_SAMPLE_STYLE: dict[str, tuple[tuple[int, int, int], tuple[int, int, int], str]] = {
    "entertainment": ((48, 16, 72), (250, 200, 60), "spotlights"),
    "geography": ((150, 200, 235), (70, 110, 50), "mountains"),
    "health": ((245, 245, 245), (210, 30, 40), "crosses"),
    "politics": ((20, 40, 110), (240, 240, 240), "stripes"),
    "science/technology": ((10, 60, 60), (80, 230, 200), "circuit"),
    "sports": ((40, 140, 60), (255, 255, 255), "balls"),
    "travel": ((250, 160, 70), (60, 60, 70), "roads"),
}
SAMPLE_SIZE = (960, 720)


def _jitter(rng, colour: tuple[int, int, int], amount: int = 30) -> tuple[int, int, int]:
    return tuple(int(min(255, max(0, c + rng.integers(-amount, amount + 1)))) for c in colour)


def draw_sample_image(topic: str, number: int, seed: int = 0):
    """A PIL image for (topic, number): the topic's motif with seeded variation."""

    background, foreground, motif = _SAMPLE_STYLE[topic]
    rng = np.random.default_rng([seed, TOPICS.index(topic), number])
    width, height = SAMPLE_SIZE
    image = Image.new("RGB", SAMPLE_SIZE, _jitter(rng, background))
    draw = ImageDraw.Draw(image)
    fg = _jitter(rng, foreground)
    count = int(rng.integers(3, 7))
    if motif == "spotlights":
        for _ in range(count):
            x, y, r = rng.integers(80, width - 80), rng.integers(80, height - 80), rng.integers(40, 140)
            for ring in range(4):
                rr = int(r - ring * r / 4)
                draw.ellipse([x - rr, y - rr, x + rr, y + rr], outline=fg, width=6)
    elif motif == "mountains":
        base = height - int(rng.integers(60, 160))
        for _ in range(count):
            x, w, h = int(rng.integers(0, width)), int(rng.integers(150, 400)), int(rng.integers(200, 500))
            draw.polygon([(x - w, base), (x, base - h), (x + w, base)], fill=_jitter(rng, fg, 20))
        draw.rectangle([0, base, width, height], fill=_jitter(rng, (60, 90, 40), 15))
        sx, sy = int(rng.integers(60, width - 60)), int(rng.integers(40, 160))
        draw.ellipse([sx - 40, sy - 40, sx + 40, sy + 40], fill=(255, 220, 90))
    elif motif == "crosses":
        for _ in range(count):
            x, y, s = int(rng.integers(60, width - 60)), int(rng.integers(60, height - 60)), int(rng.integers(30, 110))
            draw.rectangle([x - s, y - s // 3, x + s, y + s // 3], fill=fg)
            draw.rectangle([x - s // 3, y - s, x + s // 3, y + s], fill=fg)
    elif motif == "stripes":
        stripes = int(rng.integers(3, 8))
        for i in range(stripes):
            if i % 2:
                draw.rectangle([0, i * height // stripes, width, (i + 1) * height // stripes], fill=fg)
        px = int(rng.integers(200, width - 200))
        draw.polygon(
            [(px - 120, height), (px - 80, height - 260), (px + 80, height - 260), (px + 120, height)],
            fill=_jitter(rng, (120, 70, 30), 20),
        )
    elif motif == "circuit":
        step = int(rng.integers(60, 120))
        for x in range(step, width, step):
            for y in range(step, height, step):
                if rng.random() < 0.5:
                    draw.line([x, y, x + step, y], fill=fg, width=4)
                if rng.random() < 0.5:
                    draw.line([x, y, x, y + step], fill=fg, width=4)
                if rng.random() < 0.3:
                    draw.ellipse([x - 10, y - 10, x + 10, y + 10], fill=fg)
    elif motif == "balls":
        for lane in range(1, 6):
            y = lane * height // 6
            draw.line([0, y, width, y], fill=(230, 230, 230), width=3)
        for _ in range(count):
            x, y, r = int(rng.integers(60, width - 60)), int(rng.integers(60, height - 60)), int(rng.integers(30, 80))
            draw.ellipse([x - r, y - r, x + r, y + r], fill=fg, outline=(0, 0, 0), width=4)
            draw.line([x - r, y, x + r, y], fill=(0, 0, 0), width=3)
    elif motif == "roads":
        vx = int(rng.integers(width // 3, 2 * width // 3))
        horizon = int(rng.integers(height // 4, height // 2))
        draw.rectangle([0, horizon, width, height], fill=_jitter(rng, (120, 110, 100), 20))
        draw.polygon([(vx - 10, horizon), (vx + 10, horizon), (vx + 300, height), (vx - 300, height)], fill=fg)
        for _ in range(count):
            x, y = int(rng.integers(60, width - 60)), int(rng.integers(30, max(31, horizon - 30)))
            draw.polygon([(x - 50, y), (x + 50, y), (x + 10, y - 12), (x - 10, y - 12)], fill=(250, 250, 250))
            draw.polygon([(x - 10, y - 6), (x + 10, y - 6), (x, y - 40)], fill=(250, 250, 250))
    return image


def generate_sample_set(out_dir: Path, per_topic: int = 10, seed: int = 0) -> list[ImageEntry]:
    """Write the generated images as PNG under `out_dir` and return their manifest entries
    (url relative to `out_dir`, real sha256 of the written file)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = []
    for topic in TOPICS:
        for number in range(per_topic):
            image_id = f"{topic_slug(topic)}-{number:02d}"
            name = f"{image_id}.png"
            draw_sample_image(topic, number, seed).save(out_dir / name, format="PNG", optimize=False)
            entries.append(
                ImageEntry(
                    topic=topic,
                    image_id=image_id,
                    url=name,
                    licence="CC0-1.0",
                    attribution="generated by babelforge (sample profile)",
                    sha256=sha256_file(out_dir / name),
                )
            )
    return entries
