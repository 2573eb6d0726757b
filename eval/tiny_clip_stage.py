"""`babelforge eval_tiny_clip`: the tiny random CLIP models of the sample profile (no network)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.config import Paths, hidden_alias, setting, stage_paths
from babelforge.core.progress import info
from babelforge.eval.models import build_tiny_clip


@dataclass(frozen=True)
class Config:
    """The `eval.tiny_clip` group of params.yaml."""

    GROUP = "eval.tiny_clip"
    seeds: list[int] = setting([0, 1, 2], "one model per seed, written to <paths.tiny_clip>/s<seed>")
    image_size: int = setting(32, "input image size in pixels (patch size 8)")
    paths: Paths = stage_paths()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", dest="paths.tiny_clip", metavar="DIR", help="folder to write s<seed>/ models into (paths.tiny_clip)"
    )
    hidden_alias(parser, "--out-dir", "--out")


def run(config: Config) -> int:

    for seed in config.seeds:
        path = build_tiny_clip(Path(config.paths.tiny_clip) / f"s{seed}", seed=seed, image_size=config.image_size)
        info(f"eval_tiny_clip: seed {seed} -> {path}")
    return 0
