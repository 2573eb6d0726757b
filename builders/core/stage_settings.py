"""What a command's typed settings become outside its code: params.yaml groups, dvc.yaml params, flags.

Read by the generators (scripts/pipeline_files.py, scripts/docs_reference.py) and the CLI's parser,
never by a stage while it runs: an edit here reruns no stage (no stage's code deps name this module).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from pathlib import PurePosixPath
from typing import Any

from babelforge.core.config import declared_default, has_profile_choice
from babelforge.core.determinism import BuildSettings
from babelforge.core.numbers import ANY, number_flag
from babelforge.core.stage_table import table
from babelforge.core.stages import Stage, load, named_settings, paths_class


def setting_groups(config: type, group: str | None = None) -> dict[str, type]:
    """params.yaml group -> the Config class that reads it, for `config` and every group it takes from
    elsewhere (`from_group`); `profile` is no group."""
    found = {group or config.GROUP: config}
    hints = typing.get_type_hints(config)
    for field in dataclasses.fields(config):
        other = field.metadata.get("group")
        if other and other != "profile" and dataclasses.is_dataclass(hints[field.name]):
            for name, cls in setting_groups(hints[field.name], other).items():
                found.setdefault(name, cls)
    return found


def params_groups() -> dict[str, tuple[type, list[str]]]:
    """Every params.yaml group -> (the class of its settings, the commands that read it): `paths` and
    `build` first, then each command's own groups and those it takes from elsewhere, in pipeline order."""
    groups: dict[str, tuple[type, list[str]]] = {"paths": (paths_class(), []), "build": (BuildSettings, [])}
    for name in table():
        stage = load(name)
        if stage.pinned:
            groups["build"][1].append(name)
        if stage.config is None or not stage.in_params_yaml:
            continue
        # setting_groups names `paths` too (stage_paths() takes it from the group): each reader once
        for group, cls in setting_groups(stage.config).items():
            groups.setdefault(group, (cls, []))[1].append(name)
    return groups


def own_settings(config: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(config) if "group" not in f.metadata and "subgroup" not in f.metadata]


def _chooses_by_profile(config: type) -> bool:
    hints = typing.get_type_hints(config)
    return any(
        has_profile_choice(declared_default(f))
        or (dataclasses.is_dataclass(hints[f.name]) and _chooses_by_profile(hints[f.name]))
        for f in own_settings(config)
    )


def dvc_params(stage: Stage) -> list[str]:
    """The params a DVC stage is rerun for: `profile` when its config reads it or a setting it reads
    has a per-profile value; every `paths.*` its files name; its groups (a group holding another
    command's sub-group by key, so that one's changes do not rerun it; a group without settings left
    out), or the keys its declaration names; the CPU pin of a pinned stage."""
    groups = setting_groups(stage.config) if stage.config is not None else {}
    reads_profile = stage.config is not None and any(
        f.metadata.get("group") == "profile"
        for cls in [stage.config, *groups.values()]
        for f in dataclasses.fields(cls)
    )
    paths = [name for path in stage.files() for name in named_settings(path) if name.startswith("paths.")]
    chosen: list[str] = []
    if stage.params is not None:
        chosen = list(stage.params)
    else:
        every = {group for name in table() for group in _declared_groups(name)}
        for group, cls in groups.items():
            if group == "paths" or not own_settings(cls):
                continue
            if any(other.startswith(group + ".") for other in every):
                chosen += [f"{group}.{f.name}" for f in own_settings(cls)]
            else:
                chosen.append(group)
    profile = reads_profile or any(_chooses_by_profile(cls) for group, cls in groups.items() if group != "paths")
    pin = ["build.cpu_isa"] if stage.pinned else []
    return list(dict.fromkeys([*(["profile"] if profile else []), *paths, *chosen, *pin]))


@functools.cache
def _declared_groups(name: str) -> tuple[str, ...]:
    """The params.yaml groups command `name` reads (its module imported once)."""
    stage = load(name)
    return tuple(setting_groups(stage.config)) if stage.config is not None else ()


# ---------------------------------------------------------------- flags derived from settings


def setting_field(config: type, key: str) -> tuple[dataclasses.Field, Any, str]:
    """(field, annotation, qualified key) of the setting `key` names in `config`: an own key
    (`min_classes`) or a dotted key from the top of params.yaml through the groups the config reads
    (`paths.labels`, `eval.common.device`)."""
    if "." not in key:
        owner, name, qualified = config, key, f"{config.GROUP}.{key}"
    else:
        qualified = key
        group, _, name = key.rpartition(".")
        owner = next((cls for found, cls in setting_groups(config).items() if found == group), None)
        if owner is None:
            raise TypeError(
                f"{config.GROUP}: no group {group} among those it reads ({', '.join(setting_groups(config))})"
            )
    fields = {f.name: f for f in dataclasses.fields(owner)}
    if name not in fields:
        raise TypeError(f"{qualified}: no such setting of {owner.__name__}")
    return fields[name], typing.get_type_hints(owner)[name], qualified


def _comma_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def flag_argument(stage: Stage, flag: str) -> tuple[str, dict[str, Any]]:
    """(dest, argparse keywords) of one of the stage's flags, from its setting: the type from the
    annotation, FILE/DIR for a path (its default has a suffix: a file), the help from the setting's
    help and what this command does with it."""
    target = stage.flags[flag]
    key, note = (target, "") if isinstance(target, str) else target
    field, kind, qualified = setting_field(stage.config, key)
    options = (
        [a for a in typing.get_args(kind) if a is not type(None)]
        if typing.get_origin(kind) in (typing.Union, types.UnionType)
        else [kind]
    )
    base = options[0] if len(options) == 1 else str
    help_text = field.metadata.get("help", "")
    words: dict[str, Any] = {"help": f"{help_text}{': ' + note if note else ''} ({qualified})"}
    metavar = field.metadata.get("metavar")
    if qualified.startswith("paths."):
        metavar = metavar or ("FILE" if PurePosixPath(str(declared_default(field))).suffix else "DIR")
    if base is bool:  # the flag turns it on; params.yaml (or --set) turns it off
        words.update(action="store_const", const=True)
    elif typing.get_origin(base) is typing.Literal:
        words["choices"] = list(typing.get_args(base))
        metavar = metavar or "{" + ",".join(map(str, words["choices"])) + "}"
    elif typing.get_origin(base) in (list, tuple):
        words["type"] = _comma_list
        metavar = metavar or "A[,B...]"
    elif base in (int, float, str):
        # a number keeps the setting's declared range, checked as the flag is read
        words["type"] = number_flag(base, flag, field.metadata.get("bounds", ANY)) if base is not str else str
        metavar = metavar or {int: "N", float: "X", str: "VALUE"}[base]
    else:
        raise TypeError(f"{stage.name} {flag}: {qualified} is {kind}; a flag for it is written in configure")
    if metavar and "action" not in words:
        words["metavar"] = metavar
    return key, words
