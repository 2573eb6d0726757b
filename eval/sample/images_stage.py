"""`babelforge eval_images`: the sample profile's image sets, drawn with PIL (no photographs offline).

`write_sample_images` draws small deterministic pictures: one palette and shape family per
class (images of a class resemble each other) and one picture per caption-set image name.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from babelforge.core.config import setting
from babelforge.core.io import atomic_path
from babelforge.core.progress import info
from babelforge.core.stages import Paths, Stage, stage_paths
from babelforge.eval.inputs import imagenet_classes, require

# A run with other settings (--set, --params) and no --out writes here, in its run folder
# (babelforge.core.runs), never over <paths.eval_images>.
AD_HOC_OUTPUTS = {"paths.eval_images": "images"}


@dataclass(frozen=True)
class Config:
    """The `eval.images` group of params.yaml."""

    GROUP = "eval.images"
    n_classes: int = setting(1000, "evenly spaced ImageNet classes, one folder each (1000 = all)", minimum=1)
    per_class: int = setting(1, "images drawn per class", minimum=1)
    caption_sets: list[str] = setting(
        ["data/raw/xtd/xtd.json", "data/raw/xtd/xflickrco.json"], "caption sets whose images are drawn"
    )
    caption_images: int = setting(100, "the first N images of each caption set", minimum=1)
    size: int = setting(64, "image side in pixels", minimum=1)
    paths: Paths = stage_paths()


def chosen_classes(classes: list[tuple[int, str]], n_classes: int) -> list[tuple[int, str]]:
    """`n_classes` classes spread evenly over the class list."""
    return classes[:: max(1, len(classes) // n_classes)][:n_classes]


def run(config: Config) -> int:

    chosen = chosen_classes(imagenet_classes(), config.n_classes)
    names: list[str] = []
    for caption_file in config.caption_sets:
        data = json.loads(require(caption_file, "caption set", "fetch").read_text(encoding="utf-8"))
        names.extend(n for n in data["images"][: config.caption_images] if n not in names)
    written = write_sample_images(config.paths.eval_images, chosen, config.per_class, names, size=config.size)
    info(
        f"eval_images: {written['imagenet']} class images ({len(chosen)} classes), "
        f"{written['captions']} caption images -> {config.paths.eval_images}"
    )
    return 0


def draw_image(key: str, size: int = 64, family: str | None = None):
    """A deterministic picture: background and shapes from `family` (class), jitter from `key`."""

    base = random.Random(hashlib.sha256((family or key).encode()).hexdigest())
    jitter = random.Random(hashlib.sha256(key.encode()).hexdigest())
    background = tuple(base.randrange(256) for _ in range(3))
    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    for _ in range(3):
        color = tuple(min(255, max(0, base.randrange(256) + jitter.randrange(-30, 31))) for _ in range(3))
        x0, y0 = base.randrange(size // 2) + jitter.randrange(4), base.randrange(size // 2) + jitter.randrange(4)
        x1, y1 = x0 + base.randrange(size // 4, size // 2), y0 + base.randrange(size // 4, size // 2)
        shape = base.choice(("ellipse", "rectangle", "triangle"))
        if shape == "ellipse":
            draw.ellipse((x0, y0, x1, y1), fill=color)
        elif shape == "rectangle":
            draw.rectangle((x0, y0, x1, y1), fill=color)
        else:
            draw.polygon([(x0, y1), ((x0 + x1) // 2, y0), (x1, y1)], fill=color)
    return image


def write_sample_images(
    out_dir: str | Path,
    classes: Sequence[tuple[int, str]],
    per_class: int,
    caption_images: Sequence[str] = (),
    size: int = 64,
) -> dict[str, int]:
    """`<out>/imagenet/<wnid>/<i>.png` per class and `<out>/captions/<name>` per caption image."""

    out = Path(out_dir)
    written = {"imagenet": 0, "captions": 0}
    for _, wnid in classes:
        for index in range(per_class):
            with atomic_path(out / "imagenet" / wnid / f"{index}.png") as tmp:
                draw_image(f"{wnid}/{index}", size, family=wnid).save(tmp, format="PNG")
            written["imagenet"] += 1
    for name in caption_images:
        with atomic_path(out / "captions" / name) as tmp:
            fmt = "JPEG" if name.lower().endswith((".jpg", ".jpeg")) else "PNG"
            draw_image(name, size).save(tmp, format=fmt, quality=95)
        written["captions"] += 1
    return written


STAGE = Stage(
    "eval_images",
    "draw the sample profile's image sets (ImageNet-style folder + caption images)",
    run,
    config=Config,
    flags={
        "--out": ("paths.eval_images", "writes imagenet/<wnid>/ and captions/ here"),
    },
    deps=(
        "resources/imagenet1k_classes.tsv",
        "data/raw/xtd/xtd.json",
        "data/raw/xtd/xflickrco.json",
    ),
    outs=("${paths.eval_images}",),
    docs="docs/guides/evaluate.md",
    ad_hoc_outputs=AD_HOC_OUTPUTS,
    owns={
        "eval_images": ("data/eval/images", "the sample profile's image sets"),
    },
)
