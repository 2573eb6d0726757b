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

import dataclasses
import os
import re
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from babelforge.core.errors import listed

RUNS = Path("runs")
TIME_FORMAT = "%Y%m%d-%H%M%S"
# Not settings: --debug changes nothing that is computed; --set is read key by key.
# The flag that lets `--out` write anywhere (`out_problem`): no setting either.
OUT_ANYWHERE = "out_anywhere"
NOT_SETTINGS = frozenset({"debug", "set", OUT_ANYWHERE})
_INTERPOLATION = re.compile(r"\$\{([^}]+)\}")


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


def filled(text: str, values: Mapping[str, Any]) -> str | None:
    """`${a.b}` in a dvc.yaml path filled from `values` (nested mappings); None when one is not there."""
    missing = False

    def lookup(match: re.Match) -> str:
        nonlocal missing
        node: Any = values
        for part in match[1].split("."):
            if not isinstance(node, Mapping) or part not in node:
                missing = True
                return ""
            node = node[part]
        return str(node)

    filled = _INTERPOLATION.sub(lookup, text)
    return None if missing else filled


def tracked_outputs(dvc: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, list[str]]:
    """{stage: the paths it writes} of a `dvc.yaml` (outs and metrics, `${...}` filled from params.yaml;
    a foreach stage as `name@key` per key)."""
    found: dict[str, list[str]] = {}
    for name, body in (dvc.get("stages") or {}).items():
        if not isinstance(body, Mapping):
            continue
        runs = [(name, body, params)]
        if "foreach" in body:
            items = body["foreach"]
            pairs = items.items() if isinstance(items, Mapping) else ((item, item) for item in items or ())
            runs = [
                (f"{name}@{key}", body.get("do") or {}, {**params, "key": key, "item": item}) for key, item in pairs
            ]
        for stage, spec, values in runs:
            paths = []
            for entry in [*(spec.get("outs") or ()), *(spec.get("metrics") or ())]:
                for path in entry if isinstance(entry, Mapping) else [entry]:
                    written = filled(str(path), values)
                    if written:
                        paths.append(written)
            found[stage] = paths
    return found


def out_problem(
    out: str, written: Sequence[str], tracked: Mapping[str, str], allowed: Sequence[str | Path]
) -> str | None:
    """What is wrong with an `--out` (None: nothing): the folder or file it names, or an output the stage
    then writes, lies (after symlinks) in a tracked output of another stage ({path: stage}), or a written
    output holds one; or it lies outside every `allowed` folder (the project first, then the temp folder).
    A path inside the project is shown relative to it."""

    def real(path: str | Path) -> Path:
        return Path(os.path.realpath(path))

    roots = [real(folder) for folder in allowed]

    def shown(path: Path) -> str:
        return path.relative_to(roots[0]).as_posix() if roots and path.is_relative_to(roots[0]) else str(path)

    targets = [(real(out), False), *((real(path), True) for path in written)]
    for target, holds in targets:
        for path, stage in sorted(tracked.items()):
            output = real(path)
            if target == output or target.is_relative_to(output):
                return f"{shown(target)} lies in {path}, a DVC-tracked output of {stage}"
            if holds and output.is_relative_to(target):
                return f"{shown(target)} holds {path}, a DVC-tracked output of {stage}"
    for target, _ in targets:
        if not any(target.is_relative_to(root) for root in roots):
            others = f" and the temp folder ({', '.join(map(str, roots[1:]))})" if roots[1:] else ""
            return f"{target} is outside the project folder{others}"
    return None


# --- what an --out may replace -------------------------------------------------------------------


def replace_problem(
    command: str,
    target: Path,
    shown: str,
    inputs: Mapping[str, Path],
    git_tracked: Sequence[str],
    foreign: Sequence[str],
) -> str | None:
    """What an output `target` (a real path, `shown` as the user reads it) would destroy if the command
    replaced it (None: nothing): one of the command's own `inputs` ({as shown: real path}) it is, holds or
    lies in; files git tracks at or under it; files the command did not write (io.not_written_by)."""
    for name, path in sorted(inputs.items()):
        if target == path:
            return f"{shown} is an input of {command} (the run would replace what it reads)"
        if path.is_relative_to(target):
            return f"{shown} holds {name}, an input of {command}"
        if target.is_relative_to(path):
            return f"{shown} lies in {name}, an input of {command}"
    if list(git_tracked) == ["."]:
        return f"{shown} is a file git tracks"
    if list(foreign) == ["."]:
        return f"{shown} is a file babelforge {command} did not write"
    files = f"{len(foreign)} file{'s' if len(foreign) > 1 else ''} babelforge {command} did not write"
    if git_tracked:
        # every file that would go is named: the tracked ones first, then all (an uncommitted one among them)
        among = f", among {files} ({listed(foreign)})" if set(foreign) - set(git_tracked) else ""
        return f"{shown} holds files git tracks ({listed(git_tracked)}){among}"
    if foreign:
        return f"{shown} holds {files} ({listed(foreign)})"
    return None


def config_values(config: Any, group: str) -> dict[str, Any]:
    """A Config's values nested as params.yaml holds them: its own fields under `group`, a field taken
    from another group (`from_group`: `paths`, `profile`, `eval.common`) under that group, so the
    `${paths.xm3600_release}` or `${wordnet.classes}` of a declaration's deps fill from it (`filled`)."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        value = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value
        *parents, last = (field.metadata.get("group") or f"{group}.{field.name}").split(".")
        node = values
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return values
