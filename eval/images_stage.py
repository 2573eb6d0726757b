"""`babelforge eval_images`: the sample profile's image sets, drawn with PIL (no photographs offline)."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from babelforge.core.config import Paths, hidden_alias, setting, stage_paths
from babelforge.core.progress import info
from babelforge.eval.common import imagenet_classes, require
from babelforge.eval.images import write_sample_images


@dataclass(frozen=True)
class Config:
    """The `eval.images` group of params.yaml."""

    GROUP = "eval.images"
    n_classes: int = setting(1000, "evenly spaced ImageNet classes, one folder each (1000 = all)")
    per_class: int = setting(1, "images drawn per class")
    caption_sets: list[str] = setting(
        ["data/raw/xtd/xtd.json", "data/raw/xtd/xflickrco.json"], "caption sets whose images are drawn"
    )
    caption_images: int = setting(100, "the first N images of each caption set")
    size: int = setting(64, "image side in pixels")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        dest="paths.eval_images",
        metavar="DIR",
        help="writes imagenet/<wnid>/ and captions/ here (paths.eval_images)",
    )
    hidden_alias(parser, "--out-dir", "--out")


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
