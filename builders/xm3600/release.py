"""The files of the official XM3600 release: where each comes from, how big the official page says
it is, and the sha256 it is pinned to; and the fetch plan printed from them (offline).

Facts from the official page (https://google.github.io/crossmodal-3600/, repository
google/crossmodal-3600 `index.html`): the captions are `web-data/captions.zip` ("Captions (17 MB)",
licensed by Google LLC under CC BY 4.0); the images are
`https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz` ("Images (302 MB)"), Open
Images photographs whose per-image licences and authors are listed in `web-data/image_attributions.csv`.
The page publishes no checksums: a pin is a setting, `None` until someone has checked the download.

Pure: the stage reads and writes the files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CAPTIONS_URL = "https://google.github.io/crossmodal-3600/web-data/captions.zip"
IMAGES_URL = "https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz"
ATTRIBUTIONS_URL = "https://google.github.io/crossmodal-3600/web-data/image_attributions.csv"
CAPTIONS_FILE = "captions.jsonl"  # inside captions.zip
IMAGES_FOLDER = "images"  # images.tgz unpacked: images/<image/key>.jpg
MANIFEST = "fetch.json"  # in the release folder: what was fetched, or why nothing was
MIRROR_FOLDER = "xm3600"  # a source mirror holds the archives under xm3600/
UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class ReleaseFile:
    """One archive of the release."""

    name: str  # its file name in the release folder and under xm3600/ on a mirror
    url: str  # upstream
    size: str  # as the official page states it (no byte count is published)
    sha256: str | None  # the pin; None: not pinned yet (the fetch refuses it)
    what: str


def release_files(captions_sha256: str | None, images_sha256: str | None) -> tuple[ReleaseFile, ...]:
    return (
        ReleaseFile("captions.zip", CAPTIONS_URL, "17 MB", captions_sha256, f"{CAPTIONS_FILE}: 3,600 lines"),
        ReleaseFile("images.tgz", IMAGES_URL, "302 MB", images_sha256, "3,600 JPEG images, <image/key>.jpg"),
    )


def source_of(file: ReleaseFile, mirror: str | None, mirror_url: str | None) -> str:
    """Where the fetch takes `file` from: an HTTP mirror, else a local mirror, else upstream."""
    if mirror_url:
        return f"{mirror_url.rstrip('/')}/{MIRROR_FOLDER}/{file.name}"
    if mirror:
        return f"{mirror.rstrip('/')}/{MIRROR_FOLDER}/{file.name}"
    return file.url


def unpinned(files: Sequence[ReleaseFile]) -> list[ReleaseFile]:
    return [file for file in files if not file.sha256]


def plan_lines(files: Sequence[ReleaseFile], mirror: str | None, mirror_url: str | None, setting: str) -> list[str]:
    """The fetch plan: each file, its size, its pin (UNKNOWN stated plainly) and where it comes from."""
    lines = [f"xm3600_fetch plan: {len(files)} files of the official XM3600 release"]
    for file in files:
        pin = file.sha256 or f"{UNKNOWN} (not pinned: set {setting}.{file.name.split('.')[0]}_sha256)"
        lines.append(f"  {file.name:<13} {file.size:>7}  sha256 {pin}")
        lines.append(f"  {'':<13} {'':>7}  from {source_of(file, mirror, mirror_url)}  ({file.what})")
    missing = unpinned(files)
    if missing:
        lines.append(
            f"  {len(missing)} of {len(files)} pins UNKNOWN: the official page publishes no checksums; the fetch "
            "refuses an unpinned file. Download it once, check it, and pin its sha256 in params.yaml."
        )
    return lines
