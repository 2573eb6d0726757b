"""Headline metrics: the few numbers per stage that runs are compared on.

Each stage that measures something writes one small JSON under `paths.metrics` (`metrics/` by
default). The folder is tracked by git and each file is a DVC metric with `cache: false`, so
`dvc metrics diff main`, `dvc exp show` and `dvc exp diff` read every commit's and every
experiment's numbers (a metric under a git-ignored folder exists only in the workspace, and shows
as `!` everywhere else). Per-language detail stays in the stage's cached outputs under
`data/` and `reports/`: every number here becomes a column of `dvc exp show`, so a metric file
holds totals and means, never one entry per language. Each file also names the build profile
(`profile`: `sample` or `full`), so a sample build's numbers are never read as the benchmark's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json

# A headline file may nest by model or task; deeper means per-item detail crept in.
MAX_DEPTH = 3


def leaves(figures: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every value by its key path: DVC shows each as one column (`a.b.c`)."""
    flat: dict[tuple[str, ...], Any] = {}
    for key, value in figures.items():
        if isinstance(value, Mapping):
            flat.update(leaves(value, (*prefix, str(key))))
        else:
            flat[(*prefix, str(key))] = value
    return flat


def check_headline(figures: Mapping[str, Any], name: str) -> None:
    """Numbers (or null) only, nested at most MAX_DEPTH deep: what `dvc metrics diff` can compare."""
    for path, value in leaves(figures).items():
        key = ".".join(path)
        if len(path) > MAX_DEPTH:
            raise BabelforgeError(f"metrics/{name}.json: {key} is nested deeper than {MAX_DEPTH} levels")
        if value is not None and (isinstance(value, (str, list)) or not isinstance(value, (int, float))):
            raise BabelforgeError(f"metrics/{name}.json: {key} is {type(value).__name__}, not a number")
        if isinstance(value, float) and not math.isfinite(value):
            raise BabelforgeError(f"metrics/{name}.json: {key} is {value}; write null for a missing figure")


# The build profile, beside the figures: a sample build's numbers come from random tiny models.
# DVC (3.x) shows a string metric in `dvc metrics show` / `dvc exp show` and lists it old -> new in
# `dvc metrics diff` when it changes (no numeric diff; left out when equal), so it compares fine.
PROFILE_KEY = "profile"


def write_metrics(figures: Mapping[str, Any], folder: str | Path, name: str, *, profile: str | None) -> Path:
    """Write `<folder>/<name>.json` after checking it is a headline file, with the build `profile`
    (None: the inputs record none) under PROFILE_KEY."""
    check_headline(figures, name)
    if PROFILE_KEY in figures:
        raise BabelforgeError(f"metrics/{name}.json: `{PROFILE_KEY}` is the build profile's key, not a figure")
    return write_json({PROFILE_KEY: profile, **figures}, Path(folder) / f"{name}.json")
