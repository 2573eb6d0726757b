"""The XM3600 release in its published format, written by the tests (never shipped as data).

captions.jsonl: one JSON object per line, `image/key`, `image/locale`, and per language code an object
of three parallel lists `caption`, `caption/tokenized`, `caption/tokenized/lowercase`; packed as the
release packs it, captions.zip (captions.jsonl) and images.tgz (`images/<key>.jpg`), under `xm3600/` of a
source-mirror folder.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import yaml

from babelforge.cli import main
from babelforge.xm3600.captions import LANGUAGES

# A word per language in the script it is written in (digits and spaces are no script's).
WORDS = {
    "ar": "صورة", "bn": "ছবি", "cs": "fotka", "da": "billede", "de": "Bild", "el": "φωτογραφία",
    "en": "photo", "es": "foto", "fa": "عکس", "fi": "kuva", "fil": "larawan", "fr": "image",
    "he": "תמונה", "hi": "तस्वीर", "hr": "slika", "hu": "kép", "id": "gambar", "it": "immagine",
    "ja": "しゃしん写真", "ko": "사진", "mi": "whakaahua", "nl": "foto", "no": "bilde", "pl": "zdjęcie",
    "pt": "imagem", "quz": "siq'isqa", "ro": "poză", "ru": "фото", "sv": "bild", "sw": "picha",
    "te": "చిత్రం", "th": "ภาพถ่าย", "tr": "resim", "uk": "світлина", "vi": "hình", "zh": "照片",
}  # fmt: skip
KEYS = ["000411001ff7dd4f", "0a2b4c6d8e0f1a2b", "5e7a9c1b3d5f7a9c", "ffe1d3c5b7a99b8d"]
LOCALES = ["ar", "fil", "ja", "quz"]


def fixture_record(index: int) -> dict:
    """One line of captions.jsonl: 2 captions per language (Bengali 1, as in the release)."""
    record = {"image/key": KEYS[index], "image/locale": LOCALES[index]}
    for code in LANGUAGES:
        captions = [f"{WORDS[code]} {index} {n}" for n in range(1 if code == "bn" else 2)]
        record[code] = {
            "caption": captions,
            "caption/tokenized": [" ".join(caption.split()) for caption in captions],
            "caption/tokenized/lowercase": [caption.lower() for caption in captions],
        }
    return record


def fixture_text(records: list[dict]) -> str:
    # the first line with non-ASCII escaped, the others as UTF-8: both are JSON the file may hold
    return "".join(json.dumps(record, ensure_ascii=i == 0) + "\n" for i, record in enumerate(records))


def draw_jpeg(index: int) -> bytes:
    from babelforge.eval.sample.images_stage import draw_image

    buffer = io.BytesIO()
    draw_image(f"{index}.jpg", 32, family=str(index)).save(buffer, format="JPEG")
    return buffer.getvalue()


def write_mirror(root: Path, records: list[dict]) -> dict[str, str]:
    """The release's two archives under <root>/xm3600/, as published; returns their sha256."""
    folder = root / "xm3600"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(folder / "captions.zip", "w") as bundle:
        bundle.writestr("captions.jsonl", fixture_text(records))
    with tarfile.open(folder / "images.tgz", "w:gz") as bundle:
        for index, record in enumerate(records):
            data = draw_jpeg(index)
            info = tarfile.TarInfo(f"images/{record['image/key']}.jpg")
            info.size = len(data)
            bundle.addfile(info, io.BytesIO(data))
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in ("captions.zip", "images.tgz")}


def write_params(root: Path, profile: str, pins: dict[str, str] | None = None, mirror: Path | None = None) -> Path:
    params = {
        "profile": profile,
        "paths": {
            "xm3600_release": str(root / "release"),
            "xm3600": str(root / "xm3600"),
            "hub": str(root / "hub"),
            "audit": str(root / "audit"),
        },
        "xm3600_fetch": {
            "captions_sha256": (pins or {}).get("captions.zip"),
            "images_sha256": (pins or {}).get("images.tgz"),
            "mirror": str(mirror) if mirror else None,
        },
    }
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(params), encoding="utf-8")
    return path


def build_release(root: Path, images: int = 4) -> tuple[Path, dict[str, str]]:
    """The fixture of `images` images fetched from a local mirror with its pins and built under `root`:
    (params.yaml, pins)."""
    pins = write_mirror(root / "mirror", [fixture_record(i) for i in range(images)])
    params = write_params(root, "full", pins, root / "mirror")
    assert main(["xm3600_fetch", "--params", str(params)]) == 0
    assert main(["xm3600", "--params", str(params)]) == 0
    return params, pins
