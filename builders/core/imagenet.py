"""The ImageNet-1k class list (`resources/imagenet1k_classes.tsv`): class index, wnid, CLIP name.

Shared like the language registry: the wordnet stage resolves it, the audit names classes by it
before labels exist, the evaluations index images by it. Read strictly (`babelforge.core.tsv`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.resources import resource
from babelforge.core.tsv import INTEGER, TsvSpec, matching, read_tsv

IMAGENET_CLASSES = resource("imagenet1k_classes.tsv")
TABLE = TsvSpec(
    ("class_idx", "wnid", "openai_clip_name"),
    required=("class_idx", "wnid", "openai_clip_name"),
    # CLIP names are not unique (two `crane`s, two `maillot`s): only index and wnid are keys.
    unique=(("class_idx",), ("wnid",)),
    checks={"class_idx": INTEGER, "wnid": matching(r"n[0-9]{8}", "a wnid (n + 8 digits)")},
)


@dataclass(frozen=True)
class ImageNetClass:
    class_idx: int
    wnid: str
    clip_name: str


def read_imagenet_classes(path: str | Path = IMAGENET_CLASSES) -> list[ImageNetClass]:
    """Every class in file order; the indices must run 0, 1, 2 ... without a gap."""
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{path}: ImageNet class list not found")
    classes = []
    for line, row in read_tsv(path, TABLE):
        if int(row["class_idx"]) != len(classes):
            raise BabelforgeError(f"{path}:{line}: class_idx {row['class_idx']}, expected {len(classes)} (0, 1, 2 ...)")
        classes.append(ImageNetClass(len(classes), row["wnid"], row["openai_clip_name"].strip()))
    return classes
