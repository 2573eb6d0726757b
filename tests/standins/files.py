"""The files the `full` profile downloads or reads, generated for its full-size rehearsal against loopback
stand-ins: nothing here is real data, nothing it writes is committed.

Each generator takes where to write, explicit sizes and a seed, and returns what it wrote; the same
arguments give the same bytes (archives carry no clock time or owner, pictures are drawn from their names),
so a pin taken from one run holds for the next. Pictures are small (`IMAGE_PX`) and drawn by the sample
profile's own painter (`babelforge.eval.sample.images_stage.draw_image`): thousands are written in seconds.

- `write_xm3600_mirror`: the XM3600 release as published (captions.zip of captions.jsonl, images.tgz of
  `<key>.jpg`, image_attributions.csv with Open Images' header) under `<root>/xm3600/`, the layout
  `xm3600_fetch.mirror` reads; returns the three files' sha256 for `xm3600_fetch.*_sha256`.
- `mvl_sib_release_files`: the images of the Hub dataset `WueNLP/mvl-sib` (`data/images/<topic>/<nn>.jpg`),
  as the Hub stand-in serves them from memory.
- `write_imagenet_val`: an ImageNet-style validation folder `<wnid>/ILSVRC2012_val_<n>.JPEG`.
- `write_caption_set_images`: the image files an XTD-style caption set names, by the names it gives them
  (the caption tasks open `<images folder>/<name>`; eval.images.read_caption_images).
- `write_caption_input`: an English caption table (`captions.input.format: table`) as Parquet.
"""

from __future__ import annotations

import base64
import csv
import gzip
import hashlib
import io
import json
import random
import tarfile
import unicodedata
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from babelforge.captions.formats.xtd import read_caption_document
from babelforge.core.languages import registry
from babelforge.core.scripts import TRADITIONAL_ONLY, expand_script, script_of
from babelforge.eval.pins import MVL_SIB_IMAGES_FOLDER
from babelforge.eval.sample.images_stage import draw_image
from babelforge.mvl_sib.images import topic_slug
from babelforge.mvl_sib.sib200 import TOPICS
from babelforge.xm3600.captions import CAPTION, KEY, LANGUAGES, LOCALE, LOWERCASE, TOKENIZED
from babelforge.xm3600.release import ATTRIBUTIONS_FILE, CAPTIONS_FILE, MIRROR_FOLDER, release_files
from tests.xm3600.release_fixture import ATTRIBUTION_HEADER, CC_BY_2

IMAGE_PX = 48  # side of every drawn picture: small, so a full-size set is written in seconds
JPEG_QUALITY = 85
XM3600_IMAGES = 3_600
MVL_SIB_PER_TOPIC = 10  # the published release's images per SIB-200 topic


def jpeg_bytes(key: str, family: str, size: int = IMAGE_PX) -> bytes:
    """A small picture drawn from `key` (its jitter) and `family` (its look: a class or topic shares one)."""
    buffer = io.BytesIO()
    draw_image(key, size, family=family).save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- XM3600 ------------------------------------------------------------------------------------------------

# Where each script's letters are taken from: a window of code points, kept to those the project's own
# script table (babelforge.core.scripts) assigns to that script, so the xm3600 stage's script check passes.
SCRIPT_WINDOWS = {
    "Latn": (0x61, 0x7A),
    "Arab": (0x628, 0x63A),
    "Beng": (0x995, 0x9B9),
    "Cyrl": (0x430, 0x44F),
    "Deva": (0x915, 0x939),
    "Grek": (0x3B1, 0x3C9),
    "Hang": (0xAC00, 0xAD00),
    "Hani": (0x4E00, 0x4FFF),
    "Hebr": (0x5D0, 0x5EA),
    "Hira": (0x3041, 0x3096),
    "Telu": (0xC15, 0xC39),
    "Thai": (0xE01, 0xE2E),
}
UNSPACED_SCRIPTS = {"Hani", "Hira", "Kana", "Thai"}  # written without spaces between words
# Captions per image as the release has them: Bengali 1, Maori about 1.3 on average, every other language 2.
ONE_CAPTION = {"bn": 1.0, "mi": 0.7}  # code -> share of images with a single caption
AUTHOR_NAMES = ("Ana", "Kusi", "Zoë", "Jürgen", "Mei", "Tāne", "Olúwa", "Sébastien", "Nour", "Ilse")
AUTHOR_SURNAMES = ("Quispe", "Müller", "Tanaka", "O'Neill", "Ngata", "Kowalska", "Haddad", "Smith, Jr.")


@cache
def alphabet(script: str) -> str:
    """The letters captions in `script` are made of (Han without the Traditional-only characters, since
    the one Chinese language of XM3600 is Simplified)."""
    first, last = SCRIPT_WINDOWS[script]
    letters = "".join(
        char
        for char in map(chr, range(first, last + 1))
        if unicodedata.category(char).startswith("L") and script_of(char) == script and char not in TRADITIONAL_ONLY
    )
    if not letters:
        raise ValueError(f"no letters of {script} in U+{first:04X}..U+{last:04X}")
    return letters


@cache
def caption_script(code: str) -> str:
    """The script `code`'s captions are written in: the first of its registry scripts that has letters here."""
    expected = registry().resolve(code).expected_scripts
    for script in (unicode for declared in expected for unicode in sorted(expand_script(declared))):
        if script in SCRIPT_WINDOWS:
            return script
    raise ValueError(f"XM3600 language {code}: none of its scripts {expected} has letters in SCRIPT_WINDOWS")


def xm3600_key(seed: int, index: int) -> str:
    """An Open Images-style image id: 16 hex digits."""
    return hashlib.sha256(f"xm3600:{seed}:{index}".encode()).hexdigest()[:16]


def made_up_words(rng: random.Random, letters: str, count: int) -> list[str]:
    return ["".join(rng.choices(letters, k=rng.randint(2, 6))) for _ in range(count)]


def xm3600_record(rng: random.Random, key: str, locale: str) -> dict:
    """One line of captions.jsonl: the image's key and locale, then per language its captions, as written,
    tokenized and lowercased (three parallel lists)."""
    record: dict = {KEY: key, LOCALE: locale}
    for code in LANGUAGES:
        script = caption_script(code)
        joiner = "" if script in UNSPACED_SCRIPTS else " "
        count = 1 if rng.random() < ONE_CAPTION.get(code, 0.0) else 2
        words = [made_up_words(rng, alphabet(script), rng.randint(3, 9)) for _ in range(count)]
        captions = [joiner.join(caption).capitalize() for caption in words]
        tokenized = [" ".join(caption) for caption in words]
        record[code] = {CAPTION: captions, TOKENIZED: tokenized, LOWERCASE: [text.lower() for text in tokenized]}
    return record


def attribution_row(rng: random.Random, index: int, key: str, image: bytes) -> dict[str, str]:
    """A made-up row of image_attributions.csv, every published column filled (OriginalMD5 is the image's
    MD5 in base64, as Open Images writes it)."""
    user = f"{rng.randrange(10**8, 10**9)}@N0{rng.randrange(10)}"
    photo = 10**10 + index
    return {
        "ImageID": key,
        "Subset": rng.choice(("train", "validation", "test")),
        "OriginalURL": f"https://farm{index % 9 + 1}.staticflickr.com/{index}/{photo}_{key[:10]}_o.jpg",
        "OriginalLandingURL": f"https://www.flickr.com/photos/{user}/{photo}",
        "License": CC_BY_2,
        "AuthorProfileURL": f"https://www.flickr.com/people/{user}/",
        "Author": f"{rng.choice(AUTHOR_NAMES)} {rng.choice(AUTHOR_SURNAMES)}",
        "Title": f"Photo {index:04d}" if rng.random() < 0.8 else "",
        "OriginalSize": str(len(image)),
        "OriginalMD5": base64.b64encode(hashlib.md5(image).digest()).decode(),
        "Thumbnail300KURL": f"https://c{index % 9 + 1}.staticflickr.com/{index}/{photo}_{key[:10]}_z.jpg",
        "Rotation": rng.choice(("0", "0", "0", "90", "")),
    }


def zip_member(name: str) -> zipfile.ZipInfo:
    """A zip entry with a fixed date and mode: the archive's bytes do not depend on when it was written."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def tar_member(name: str, size: int) -> tarfile.TarInfo:
    """A tar entry with no time, owner or group: the archive's bytes do not depend on who wrote it when."""
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o644, 0
    return info


@dataclass(frozen=True)
class XM3600Mirror:
    folder: Path  # <root>/xm3600: the release's three files
    sha256: dict[str, str]  # release file name -> its sha256
    keys: tuple[str, ...]  # the image keys, sorted

    @property
    def pins(self) -> dict[str, str]:
        """xm3600_fetch setting -> sha256: what params.yaml pins for these files."""
        return {file.setting: self.sha256[file.name] for file in release_files(None, None, None)}


def write_xm3600_mirror(
    root: Path, n_images: int = XM3600_IMAGES, seed: int = 0, image_px: int = IMAGE_PX
) -> XM3600Mirror:
    """The XM3600 release under `<root>/xm3600/`: `n_images` images, each with captions in all 36 languages
    (locales dealt in equal blocks, as the release picked 100 images per language's region)."""
    folder = Path(root) / MIRROR_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    keys = sorted(xm3600_key(seed, index) for index in range(n_images))
    rng = random.Random(f"xm3600:{seed}")
    images = {key: jpeg_bytes(f"xm3600:{seed}:{key}", key, image_px) for key in keys}

    with zipfile.ZipFile(folder / "captions.zip", "w") as bundle, bundle.open(zip_member(CAPTIONS_FILE), "w") as out:
        for index, key in enumerate(keys):
            record = xm3600_record(rng, key, LANGUAGES[index * len(LANGUAGES) // max(n_images, 1)])
            out.write((json.dumps(record, ensure_ascii=False) + "\n").encode())

    # gzip's header holds a time and a file name: both left out
    with open(folder / "images.tgz", "wb") as raw, gzip.GzipFile("", "wb", 6, raw, mtime=0) as packed:
        with tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as bundle:
            for key, data in images.items():
                bundle.addfile(tar_member(f"images/{key}.jpg", len(data)), io.BytesIO(data))

    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=list(ATTRIBUTION_HEADER), lineterminator="\n")
    writer.writeheader()
    writer.writerows(attribution_row(rng, index, key, images[key]) for index, key in enumerate(keys))
    (folder / ATTRIBUTIONS_FILE).write_text(text.getvalue(), encoding="utf-8", newline="")

    digests = {file.name: sha256_of(folder / file.name) for file in release_files(None, None, None)}
    return XM3600Mirror(folder, digests, tuple(keys))


# --- MVL-SIB ------------------------------------------------------------------------------------------------


def mvl_sib_release_files(
    per_topic: int = MVL_SIB_PER_TOPIC, folder: Path | None = None, seed: int = 0, image_px: int = IMAGE_PX
) -> dict[str, bytes]:
    """{path in the Hub dataset: bytes}: `per_topic` images under `data/images/<topic slug>/` for each of the
    7 SIB-200 topics (eval.pins.release_image_rows takes a topic from the folder); also written under
    `folder` when given."""
    files = {
        f"{MVL_SIB_IMAGES_FOLDER}{topic_slug(topic)}/{index:02d}.jpg": jpeg_bytes(
            f"mvl-sib:{seed}:{topic}:{index}", f"mvl-sib:{seed}:{topic}", image_px
        )
        for topic in TOPICS
        for index in range(1, per_topic + 1)
    }
    if folder is not None:
        write_files(Path(folder), files)
    return files


# --- image folders the eval stages read ---------------------------------------------------------------------


def write_imagenet_val(
    folder: Path, wnids: Sequence[str], per_class: int, seed: int = 0, image_px: int = IMAGE_PX
) -> list[str]:
    """`<folder>/<wnid>/ILSVRC2012_val_<n>.JPEG`, `per_class` per wnid, numbered across classes as the
    validation set's files are; returns the relative paths written. A class's pictures share a look."""
    written = []
    for class_index, wnid in enumerate(wnids):
        (Path(folder) / wnid).mkdir(parents=True, exist_ok=True)
        for index in range(per_class):
            name = f"{wnid}/ILSVRC2012_val_{class_index * per_class + index + 1:08d}.JPEG"
            (Path(folder) / name).write_bytes(
                jpeg_bytes(f"imagenet:{seed}:{name}", f"imagenet:{seed}:{wnid}", image_px)
            )
            written.append(name)
    return written


def write_caption_set_images(
    caption_set: Path, folder: Path, first: int | None = None, seed: int = 0, image_px: int = IMAGE_PX
) -> list[str]:
    """A picture for each image an XTD-style caption set names (its first `first`, or all), at
    `<folder>/<name>`, where the caption tasks look for it; returns the names written, in the set's order."""
    names, _ = read_caption_document(Path(caption_set), "caption_set")
    names = names[:first] if first is not None else names
    for name in names:
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(jpeg_bytes(f"caption-set:{seed}:{name}", f"caption-set:{seed}:{name}", image_px))
    return names


# --- the MT-captions input -----------------------------------------------------------------------------------

SUBJECTS = (  # (one, several)
    ("man", "men"), ("woman", "women"), ("dog", "dogs"), ("cat", "cats"), ("child", "children"),
    ("bus", "buses"), ("train", "trains"), ("horse", "horses"), ("bird", "birds"), ("girl", "girls"),
    ("boy", "boys"), ("truck", "trucks"), ("bicycle", "bicycles"), ("giraffe", "giraffes"),
    ("surfer", "surfers"), ("skier", "skiers"), ("elephant", "elephants"), ("person", "people"),
)  # fmt: skip
ONE = ("a", "a", "the", "one", "a small", "a large", "an old", "a young")
SEVERAL = ("two", "three", "several", "some", "many", "a group of")
DOINGS = (
    "standing", "sitting", "walking", "riding", "parked", "eating", "looking around", "playing", "resting",
    "waiting", "running", "lying down", "crossing",
)  # fmt: skip
PLACES = ("on", "in", "near", "next to", "under", "behind", "beside", "in front of", "across", "along")
ONE_WORD_PLACES = tuple(place for place in PLACES if " " not in place)
THINGS = (
    "street", "table", "beach", "field", "snow", "bench", "water", "building", "road", "fence", "grass",
    "window", "park", "city", "hill", "station", "kitchen", "river", "tree", "wall",
)  # fmt: skip
ADJECTIVES = ("red", "white", "black", "large", "small", "busy", "sunny", "green", "old", "wet", "empty")
MIN_WORDS, MAX_WORDS = 5, 25
CAPTIONS_PER_IMAGE = 5  # as COCO gives each image five captions


def article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def english_caption(rng: random.Random) -> str:
    """A caption of 5 to 25 words: who, doing what, then phrases (where, with what) up to a drawn length."""
    length = rng.randint(MIN_WORDS, MAX_WORDS)
    one, several = rng.choice(SUBJECTS)
    if rng.random() < 0.7:
        words = f"{rng.choice(ONE)} {one} is {rng.choice(DOINGS)}".split()
    else:
        words = f"{rng.choice(SEVERAL)} {several} are {rng.choice(DOINGS)}".split()
    while len(words) < length:
        thing = f"{rng.choice(ADJECTIVES)} {rng.choice(THINGS)}" if rng.random() < 0.3 else rng.choice(THINGS)
        phrase = rng.choice(
            (
                f"{rng.choice(PLACES)} the {thing}",
                f"{rng.choice(PLACES)} {article(thing)} {thing}",
                f"with {article(thing)} {thing}",
                f"and the {rng.choice(SUBJECTS)[0]}",
            )
        ).split()
        if len(words) + len(phrase) > MAX_WORDS:
            phrase = [rng.choice(ONE_WORD_PLACES), rng.choice(THINGS) + "s"]  # two words fit where others do not
            if len(words) + 2 > MAX_WORDS:
                break
        words += phrase
    text = " ".join(words)
    return text[0].upper() + text[1:] + ("." if rng.random() < 0.6 else "")


def write_caption_input(path: Path, n_rows: int, seed: int = 0) -> Path:
    """`n_rows` English captions as a Parquet table `id, image, caption` (captions.input.format: table),
    five captions per image; returns the path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(f"captions:{seed}")
    table = pa.table(
        {
            "id": [f"{index:09d}" for index in range(n_rows)],
            "image": [f"{index // CAPTIONS_PER_IMAGE:09d}.jpg" for index in range(n_rows)],
            "caption": [english_caption(rng) for _ in range(n_rows)],
        }
    )
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=65_536)
    return path
