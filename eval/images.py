"""Image sets for evaluation: reading them and hashing them.

An image set is an ordered list of files (and, for classification, a class index per
file). Its hash covers every file's relative name and content, so an embedding cache
keyed by it goes stale exactly when an image changes.

`full` reads an ImageNet-style folder (`<root>/<wnid>/<file>`) or a TSV file list
(`path<TAB>class_idx`, paths relative to the list). `sample` has no photographs offline:
`babelforge.eval.sample.images_stage` draws its image sets.

`screen_images` opens every image once (`babelforge.core.images.open_rgb`) before any model
loads, and leaves out the ones that cannot be used under the `eval.common` bad-row policy
(`babelforge.core.bad_rows`): skip quarantines them (reason per file, counted in the run JSON),
fail stops at the first with one line naming it. The set that remains is what every model
scores, so a skipped image leaves out its class or captions alike for all of them, and its
numbers equal those of a set that never held the file. What the screening found is kept beside
the embedding cache (`screened-<key>.json`, keyed by every file's content and the reader), so
a rerun does not decode every image again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import PIL
from PIL import Image

from babelforge.core.bad_rows import REASONS, BadRow, BadRowPolicy, Quarantine, has_undecodable, raw_text
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import READER_VERSION, open_rgb
from babelforge.core.io import read_json, sha256_file, write_json
from babelforge.core.progress import progress

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")


@dataclass(frozen=True)
class ImageSet:
    root: Path
    files: tuple[str, ...]  # relative to root, in evaluation order
    targets: tuple[int, ...] | None = None  # class_idx per file (classification sets)
    # after screen_images: each file's 0-based position in the set as listed (captions are by position)
    positions: tuple[int, ...] | None = None
    digest: str | None = field(default=None, compare=False, repr=False)  # content_hash, when known

    @property
    def paths(self) -> list[Path]:
        return [self.root / name for name in self.files]

    def content_hash(self) -> str:
        if self.digest is not None:
            return self.digest
        return set_hash(self.files, [sha256_file(self.root / name) for name in self.files])


def set_hash(files: Sequence[str], file_digests: Sequence[str]) -> str:
    """An image set's content hash: every file's relative name and content sha256, in order."""
    digest = hashlib.sha256()
    for name, file_digest in zip(files, file_digests, strict=True):
        # A name with bytes that are not UTF-8 (read as surrogates) hashes as those bytes.
        digest.update(f"{name}\0{file_digest}\n".encode("utf-8", errors="surrogateescape"))
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
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        try:
            line = raw.decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError as error:
            raise BabelforgeError(
                f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start} of the line: "
                f"{raw_text(raw)[:80]!r}); save the list as UTF-8"
            ) from None
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


def read_caption_images(
    root: str | Path, names: Sequence[str], setting_name: str = "eval.retrieval.images"
) -> ImageSet:
    """The caption set's images in caption-set order. A few missing files are left to
    `screen_images` (quarantined as missing_file); none there at all is the wrong folder."""
    root = Path(root)
    if names and not any((root / name).is_file() for name in names):
        raise BabelforgeError(
            f"image folder {root}: none of the {len(names)} caption images is there (first: {names[0]}); "
            f"point params {setting_name} at the images of this caption set"
        )
    return ImageSet(root, tuple(names))


# ---------------------------------------------------------------- leaving out images that cannot be used


def _file_digest(path: Path) -> str:
    """The file's sha256, or a word for a path that is no file (its screening is keyed on it too)."""
    if path.is_file():
        return sha256_file(path)
    return "missing" if not path.exists() else "not-a-file"


def screen_images(
    image_set: ImageSet, policy: BadRowPolicy, source: str | Path, memo_dir: str | Path | None = None
) -> tuple[ImageSet, Quarantine]:
    """The images of `image_set` that `open_rgb` can read, and the quarantine of the others.

    A bad image is a row `source:<1-based position in the set>` with its file name as raw text;
    under `fail` the first one stops the run, under `skip` more than `max_bad_fraction` does.
    The set returned keeps the order, the targets and (in `positions`) where each file was.
    `memo_dir` (the embedding cache) keeps the bad positions per content, so a rerun over the
    same files decodes nothing.
    """
    paths = image_set.paths
    digests = [_file_digest(path) for path in paths]
    memo = None
    if memo_dir is not None:
        key = "\n".join(
            [
                set_hash(image_set.files, digests),
                f"reader {READER_VERSION}",
                f"pillow {PIL.__version__}",
                f"max_image_pixels {Image.MAX_IMAGE_PIXELS}",
            ]
        )
        memo = Path(memo_dir) / f"screened-{hashlib.sha256(key.encode()).hexdigest()}.json"
    found: dict[int, str] | None = None
    if memo is not None and memo.is_file():
        try:
            found = {int(position): str(reason) for position, reason in read_json(memo)["bad"]}
        except (ValueError, KeyError, TypeError):  # a broken memo: screen again
            found = None
        if found is not None and not set(found.values()) <= REASONS.keys():
            found = None
    quarantine = Quarantine(policy, "images", hint="check the image folder or list (the right one, copied whole?)")
    screened: dict[int, str] = {}
    kept = []
    order = range(len(paths))
    for position in order if found is not None else progress(order, "screen images", len(paths), unit="image"):
        if found is not None:
            reason = found.get(position)
        elif has_undecodable(image_set.files[position]):  # no name to write in a run JSON or a cache key
            reason = "bad_file_name"
        else:
            _, reason = open_rgb(paths[position])
        if reason is None:
            quarantine.keep()
            kept.append(position)
            continue
        screened[position] = reason
        quarantine.add(BadRow(str(source), position + 1, raw_text(image_set.files[position]), reason))  # fail: raises
    if memo is not None and found is None:
        write_json({"bad": sorted(screened.items())}, memo)
    quarantine.check_fraction()
    if not kept:
        count = len(image_set.files)
        raise BabelforgeError(f"{source}: none of its {count} images can be read" if count else f"{source}: no images")
    files = tuple(image_set.files[i] for i in kept)
    usable = replace(
        image_set,
        files=files,
        targets=None if image_set.targets is None else tuple(image_set.targets[i] for i in kept),
        positions=tuple(image_set.positions[i] for i in kept) if image_set.positions else tuple(kept),
        digest=set_hash(files, [digests[i] for i in kept]),
    )
    return usable, quarantine


def quarantine_record(quarantine: Quarantine) -> dict:
    """What a run JSON keeps of an image set's screening (its `quarantine` entry): the counts
    (rows, kept, quarantined, per reason) and the bad images as a small table (`bad`: source,
    line = 1-based position in the set, reason, raw = the file name)."""
    bad = [{"source": row.source, "line": row.line, "reason": row.reason, "raw": row.raw} for _, row in quarantine.bad]
    return {**quarantine.summary(), "bad": bad}
