"""Where an ad-hoc run of a stage writes: the DVC-tracked outputs only in the run `dvc repro` makes.

A run whose command line changes what is computed (`--model`, `--language`, any flag, `--set`,
another `--params`) and names no `--out` writes into a run folder of its own,
`runs/<subject>-<UTC time>/` (the models an evaluation ran), never over the tracked outputs: a
one-off run cannot replace a benchmark's results. A stage opts in with its declaration's
`ad_hoc_outputs`, {the setting (flag dest) an output is written from: its name inside the run
folder, "" for the folder itself}, and names the run with `run_subject`; the CLI applies
`run_outputs` before the stage runs. Pure functions; the CLI does the I/O.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

RUNS = Path("runs")
TIME_FORMAT = "%Y%m%d-%H%M%S"
# Not settings: --debug changes nothing that is computed; --set is read key by key.
NOT_SETTINGS = frozenset({"debug", "set"})


def given_settings(
    values: Mapping[str, Any], defaults: Mapping[str, Any], assignments: Sequence[str], group: str
) -> dict[str, Any]:
    """{setting: value} the command line set: each flag not at its default, each `--set` key.

    A `--set` key of the stage's own group is named like its flag's dest (`eval.zeroshot.out` ->
    `out`), so `--set eval.zeroshot.out=F` and `--out F` are one choice; flags win, as in
    `babelforge.cli.config_from_args`.
    """
    given: dict[str, Any] = {}
    for assignment in assignments:
        key, _, text = assignment.partition("=")
        given[key.removeprefix(f"{group}.")] = yaml.safe_load(text)
    for dest, value in values.items():
        if dest in defaults and dest not in NOT_SETTINGS and value != defaults[dest]:
            given[dest] = value
    return given


def run_name(model_ids: Sequence[str], stage: str) -> str:
    """A run folder's name before its time: the first model's folder or Hub name (`my_clip`,
    `clip-vit-base-patch32`), `+N` for N more models; the stage's short name without models."""
    if not model_ids:
        return stage.removeprefix("eval_")
    first = PurePosixPath(model_ids[0].replace("\\", "/").rstrip("/")).name or "model"
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", first).strip("._") or "model"
    return name + (f"+{len(model_ids) - 1}" if len(model_ids) > 1 else "")


def run_folder(name: str, now: datetime, taken: Collection[str] = ()) -> Path:
    """`runs/<name>-<UTC YYYYmmdd-HHMMSS>`, with `-2`, `-3`... when a run of the same second has it."""
    base = f"{name}-{now.astimezone(UTC).strftime(TIME_FORMAT)}"
    folder, n = base, 1
    while folder in taken:
        n += 1
        folder = f"{base}-{n}"
    return RUNS / folder


def changed_inputs(given: Mapping[str, Any], out_flag: str, outputs: Mapping[str, str]) -> list[str]:
    """The settings given that change what is computed (every one but the outputs)."""
    return [dest for dest in given if dest != out_flag and dest not in outputs]


def run_outputs(
    given: Mapping[str, Any],
    out_flag: str,
    outputs: Mapping[str, str],
    folder: Path,
) -> dict[str, str]:
    """The output settings to fill so that a run writes only where it may (the rule):

    - nothing given that changes what is computed, no `--out`: {} (the stage's own run, what
      dvc.yaml runs, writes its tracked outputs);
    - `--out` given: the outputs it does not set itself go there too (eval_report's `--out` is
      its input folder: its results and headline metrics then go there, not to the tracked ones);
    - else every output not named on the command line goes into `folder` (`run_folder`).
    """
    open_outputs = {dest: inside for dest, inside in outputs.items() if dest not in given}
    if out_flag in given:
        return {dest: str(given[out_flag]) for dest in open_outputs if dest != out_flag}
    if not changed_inputs(given, out_flag, outputs):
        return {}
    return {dest: str(folder / inside) if inside else str(folder) for dest, inside in open_outputs.items()}


def overlapping(targets: Collection[str | Path], tracked: Collection[str | Path]) -> str | None:
    """The first tracked output a target is, holds or lies inside (relative paths from the working folder)."""
    for target in sorted(Path(os.path.abspath(t)) for t in targets):
        for output in sorted(Path(os.path.abspath(o)) for o in tracked):
            if target == output or output.is_relative_to(target) or target.is_relative_to(output):
                return str(output)
    return None
