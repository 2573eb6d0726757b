"""Image sets for evaluation: reading them and hashing them.

An image set is an ordered list of files (and, for classification, a class index per
file). Its hash covers every file's relative name and content, so an embedding cache
keyed by it goes stale exactly when an image changes.

`full` reads an ImageNet-style folder (`<root>/<wnid>/<file>`) or a TSV file list
(`path<TAB>class_idx`, paths relative to the list). `sample` has no photographs offline:
`babelforge.eval.sample.images` draws its image sets.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import sha256_file

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


@dataclass(frozen=True)
class ImageSet:
    root: Path
    files: tuple[str, ...]  # relative to root, in evaluation order
    targets: tuple[int, ...] | None = None  # class_idx per file (classification sets)

    @property
    def paths(self) -> list[Path]:
        return [self.root / name for name in self.files]

    def content_hash(self) -> str:

        digest = hashlib.sha256()
        for name in self.files:
            digest.update(f"{name}\0{sha256_file(self.root / name)}\n".encode())
        return digest.hexdigest()


def read_imagenet_folder(root: str | Path, wnid_to_class: dict[str, int]) -> ImageSet:
    root = Path(root)
    if not root.is_dir():
        raise BabelforgeError(
            f"image folder {root} does not exist; build it (dvc repro eval_images) or fix params eval.zeroshot.images"
        )
    files, targets = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if folder.name not in wnid_to_class:
            raise BabelforgeError(f"image folder {folder}: {folder.name!r} is not an ImageNet-1k wnid")
        for file in sorted(folder.iterdir()):
            if file.suffix.lower() in IMAGE_SUFFIXES:
                files.append(f"{folder.name}/{file.name}")
                targets.append(wnid_to_class[folder.name])
    if not files:
        raise BabelforgeError(f"image folder {root}: no images in <wnid>/ subfolders")
    return ImageSet(root, tuple(files), tuple(targets))


def read_file_list(path: str | Path) -> ImageSet:
    path = Path(path)
    files, targets = [], []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[1].strip().isdigit():
            raise BabelforgeError(f"{path}:{number}: expected 'path<TAB>class_idx', got {line!r}")
        files.append(parts[0])
        targets.append(int(parts[1]))
    return ImageSet(path.parent, tuple(files), tuple(targets))


def read_classification_set(location: str | Path, wnid_to_class: dict[str, int]) -> ImageSet:
    location = Path(location)
    return read_file_list(location) if location.is_file() else read_imagenet_folder(location, wnid_to_class)


def read_caption_images(root: str | Path, names: Sequence[str]) -> ImageSet:
    root = Path(root)
    missing = [name for name in names if not (root / name).is_file()]
    if missing:
        raise BabelforgeError(
            f"image folder {root}: {len(missing)} of {len(names)} caption images missing (first: {missing[0]}); "
            "point params eval.retrieval.images at the images of this caption set"
        )
    return ImageSet(root, tuple(names))
