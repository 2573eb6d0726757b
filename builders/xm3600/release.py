"""The files of the official XM3600 release: where each comes from, how big the official page says
it is, and the sha256 it is pinned to; the fetch plan printed from them (offline); and the reader of the
release's image attributions.

Facts from the official page (https://google.github.io/crossmodal-3600/, repository
google/crossmodal-3600 `index.html`): the captions are `web-data/captions.zip` ("Captions (17 MB)",
licensed by Google LLC under CC BY 4.0); the images are
`https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz` ("Images (302 MB)"), Open
Images photographs whose per-image licences and authors are listed in `web-data/image_attributions.csv`
("Image Attributions (1.3 MB)").

The page publishes no checksums. The pins (settings of `xm3600_fetch`, in params.yaml) are the sha256
that a public repository which downloads and verifies the release pins for these three URLs; the
attributions' pin also matches that file in google/crossmodal-3600 (commit ad44c38). If a first real
download disagrees, the fetch refuses it with one line naming the file, both digests and where its pin
lives (`babelforge.core.pins.mismatch_line`).

`image_attributions.csv` is a CSV with a header, as Open Images' own image files write it: the published
one has `ImageID,Subset,OriginalURL,OriginalLandingURL,License,AuthorProfileURL,Author,Title,
OriginalSize,OriginalMD5,Thumbnail300KURL,Rotation`, one row per image (`License` a licence URL, CC BY
2.0 for all 3,600). `read_attributions` reads the header tolerantly: names matched case-insensitively,
`ImageID`, `Author` and `License` required, `OriginalLandingURL` and `Title` taken when present, other
columns ignored. Its text is typed by other people (Flickr names and titles), so every field kept goes
through the project's rule for typed text (`babelforge.core.typed_text`): a line break, a control, bidi
or invisible character is refused with file:line, never carried into a row or a card.

Pure: the stage reads and writes the files.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from babelforge.core.errors import BabelforgeError
from babelforge.core.pins import PinHome
from babelforge.core.typed_text import shown, value_problem

CAPTIONS_URL = "https://google.github.io/crossmodal-3600/web-data/captions.zip"
IMAGES_URL = "https://open-images-dataset.s3.amazonaws.com/crossmodal-3600/images.tgz"
ATTRIBUTIONS_URL = "https://google.github.io/crossmodal-3600/web-data/image_attributions.csv"
# The pins: sha256 of the three files as a public repository that downloads and verifies the release pins them.
CAPTIONS_SHA256 = "7964f969d39319a96769499b199042015754f8d5607b6aad2d1c2c2e55f5e562"
IMAGES_SHA256 = "ba57c58d7f7a35d95315157b609ca280d55ba10a107026f67d2e98371e221188"
ATTRIBUTIONS_SHA256 = "288de413d25e9c70dadfd42ee59256aa1082673e615d0eda02c3875fe2b36ecd"
CAPTIONS_FILE = "captions.jsonl"  # inside captions.zip
IMAGES_FOLDER = "images"  # images.tgz unpacked: images/<image/key>.jpg
IMAGE_SUFFIX = ".jpg"  # images.tgz holds <image/key>.jpg
IMAGE_KEY = re.compile(r"[0-9a-f]{16}")  # an Open Images id, as every image/key and image file name of the release
ATTRIBUTIONS_FILE = "image_attributions.csv"  # kept as it is in the release folder
MANIFEST = "fetch.json"  # in the release folder: what was fetched, or why nothing was
MIRROR_FOLDER = "xm3600"  # a source mirror holds the release files under xm3600/
GROUP = "xm3600_fetch"  # the params.yaml group whose settings hold the pins
UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class ReleaseFile:
    """One file of the release."""

    name: str  # its file name in the release folder and under xm3600/ on a mirror
    url: str  # upstream
    size: str  # as the official page states it (no byte count is published)
    sha256: str | None  # the pin; None: not pinned (the fetch refuses it)
    what: str
    setting: str = ""  # the `xm3600_fetch` setting holding its pin

    @property
    def pin(self) -> PinHome:
        """The file as `babelforge pins` lists it, and where its pin is written."""
        return PinHome(f"{MIRROR_FOLDER}/{self.name}", f"params.yaml {GROUP}.{self.setting}")


def release_files(
    captions_sha256: str | None, images_sha256: str | None, attributions_sha256: str | None = None
) -> tuple[ReleaseFile, ...]:
    return (
        ReleaseFile(
            "captions.zip",
            CAPTIONS_URL,
            "17 MB",
            captions_sha256,
            f"{CAPTIONS_FILE}: 3,600 lines",
            "captions_sha256",
        ),
        ReleaseFile(
            "images.tgz",
            IMAGES_URL,
            "302 MB",
            images_sha256,
            "3,600 JPEG images, <image/key>.jpg",
            "images_sha256",
        ),
        ReleaseFile(
            ATTRIBUTIONS_FILE,
            ATTRIBUTIONS_URL,
            "1.3 MB",
            attributions_sha256,
            "each image's author, licence and Flickr page; kept as it is",
            "attributions_sha256",
        ),
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


def plan_lines(files: Sequence[ReleaseFile], mirror: str | None, mirror_url: str | None) -> list[str]:
    """The fetch plan: each file, its size, its pin (UNKNOWN stated plainly) and where it comes from,
    then how many are pinned."""
    lines = [f"{GROUP} plan: {len(files)} files of the official XM3600 release"]
    width = max(len(file.name) for file in files)
    for file in files:
        pin = file.sha256 or f"{UNKNOWN} (not pinned: set {GROUP}.{file.setting})"
        lines.append(f"  {file.name:<{width}} {file.size:>7}  sha256 {pin}")
        lines.append(f"  {'':<{width}} {'':>7}  from {source_of(file, mirror, mirror_url)}  ({file.what})")
    missing = unpinned(files)
    pinned = len(files) - len(missing)
    lines.append(
        f"  {pinned} of {len(files)} pinned (the official page publishes no checksums; the default pins are "
        "the sha256 a public repository that downloads and verifies the release pins; a download that disagrees "
        "is refused in one line naming the file, both digests and where its pin lives)"
    )
    if missing:
        lines.append(
            f"  {len(missing)} of {len(files)} pins {UNKNOWN}: the fetch refuses an unpinned file. Download it "
            f"once, check it, and pin its sha256 in params.yaml ({', '.join(f'{GROUP}.{f.setting}' for f in missing)})."
        )
    return lines


# --- image_attributions.csv -----------------------------------------------------------------------------

# column -> its name in the published header; matched case-insensitively
REQUIRED_COLUMNS = {"image_id": "ImageID", "author": "Author", "licence": "License"}
OPTIONAL_COLUMNS = {"landing_url": "OriginalLandingURL", "title": "Title"}
ATTRIBUTION_CHARS = 500  # the longest field kept (the published file's longest, a title, has 255)


@dataclass(frozen=True)
class Attribution:
    """One image's row of image_attributions.csv: what CC BY requires to be given with it."""

    image_id: str
    author: str
    licence: str  # as written: a licence URL (https://creativecommons.org/licenses/by/2.0/)
    landing_url: str | None  # the photograph's page (Flickr); None: no such column or an empty field
    title: str | None
    line: int


def read_attributions(text: str, where: str) -> dict[str, Attribution]:
    """image id -> its attribution, from the text of image_attributions.csv (`where` names the file in
    messages). Stops with one line naming `where`:line at a missing required column, a row of another
    width, an empty required field, an image id given twice, or a field the typed-text rule refuses."""
    reader = csv.reader(io.StringIO(text, newline=""))  # rows end at \n or \r only, as CSV's do
    try:
        header = next(reader, None)
    except csv.Error as error:
        raise BabelforgeError(f"{where}:1: not a CSV header ({error})") from None
    if not header:
        raise BabelforgeError(f"{where}: empty; expected a header naming {', '.join(REQUIRED_COLUMNS.values())}")
    index = {name.strip().lstrip("\ufeff").lower(): position for position, name in reversed(list(enumerate(header)))}
    absent = [name for name in REQUIRED_COLUMNS.values() if name.lower() not in index]
    if absent:
        raise BabelforgeError(
            f"{where}:1: no {', '.join(absent)} column (the header has {', '.join(header)}); "
            f"{', '.join(REQUIRED_COLUMNS.values())} are required"
        )
    columns = {
        field: index.get(name.lower())
        for field, name in {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}.items()
        if name.lower() in index
    }
    found: dict[str, Attribution] = {}
    while True:
        line = reader.line_num + 1  # where the row starts (a quoted field may run over several lines)
        try:
            row = next(reader, None)
        except csv.Error as error:
            raise BabelforgeError(f"{where}:{line}: not CSV ({error})") from None
        if row is None:
            break
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise BabelforgeError(f"{where}:{line}: {len(row)} fields, but the header has {len(header)}")
        values = {field: row[position].strip() for field, position in columns.items()}
        for field, value in values.items():
            problem = value_problem(value, ATTRIBUTION_CHARS)
            if problem:
                column = {**REQUIRED_COLUMNS, **OPTIONAL_COLUMNS}[field]
                raise BabelforgeError(
                    f"{where}:{line}: {column} {shown(value)} {problem} (image {values['image_id'] or '?'})"
                )
        for field, name in REQUIRED_COLUMNS.items():
            if not values[field]:
                raise BabelforgeError(f"{where}:{line}: empty {name} (image {values['image_id'] or '?'})")
        key = values["image_id"]
        if key in found:
            raise BabelforgeError(f"{where}:{line}: image {key} has a row already (line {found[key].line})")
        found[key] = Attribution(
            key,
            values["author"],
            values["licence"],
            values.get("landing_url") or None,
            values.get("title") or None,
            line,
        )
    return found
