"""params.yaml access: one file, grouped by stage (DVC tracks each group)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from babelforge.core.errors import BabelforgeError

DEFAULT_PARAMS = "params.yaml"
# The one-line switch at the top of params.yaml; any setting may be a {sample: ..., full: ...} map.
PROFILES = ("sample", "full")


# The file that marks a project's root folder (the one `dvc repro` runs stages in).
PROJECT_MARKER = "dvc.yaml"


def find_params(path: str | Path = DEFAULT_PARAMS, start: Path | None = None) -> Path:
    """The params file a command reads: `path` when it is there; the default `params.yaml`, when the
    working folder has none, that of the project the folder lies in: the nearest folder above
    holding params.yaml and dvc.yaml (as git finds `.git`, dvc `.dvc`). Relative paths are seen from
    `start`, the working folder unless given."""
    path = Path(path)
    here = (start or Path.cwd()).resolve()
    if (here / path).is_file():
        return path
    if path == Path(DEFAULT_PARAMS):
        folder = project_folder(here.parent)
        if folder is not None:
            return folder / DEFAULT_PARAMS
        raise BabelforgeError(
            f"no {DEFAULT_PARAMS} in {here} or a folder above it: run inside a babelforge project, or pass --params FILE"
        )
    raise BabelforgeError(
        f"{path}: no params file; pass --params FILE, or run inside a babelforge project without --params"
    )


def project_folder(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding params.yaml and dvc.yaml (a babelforge project)."""
    for folder in (start, *start.parents):
        if (folder / DEFAULT_PARAMS).is_file() and (folder / PROJECT_MARKER).is_file():
            return folder
    return None


def project_root(params_path: str | Path, start: Path | None = None) -> Path:
    """The folder relative paths in the params file resolve from: the project's root, the nearest folder
    holding dvc.yaml at or above the params file (so a command reads the same files from any subfolder);
    the working folder for a params file outside any project (a test's or a user's scratch copy)."""
    here = (start or Path.cwd()).resolve()
    params_folder = (here / params_path).parent.resolve()  # the file itself may be a link to elsewhere
    for folder in (params_folder, *params_folder.parents):
        if (folder / PROJECT_MARKER).is_file():
            return folder
    return here


def load_params(path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    """The params file as a mapping of stage groups; one-line errors for a missing or malformed file, an
    empty one and one without its `profile:` line (the switch every build states, see `profile_of`)."""
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(
            f"{path}: no params file; pass --params FILE, or run inside a babelforge project without --params"
        )
    data = read_yaml(path) or {}
    if not data:  # an empty file (or only comments) would build silently with every default
        raise BabelforgeError(
            f"{path}: empty; a params file starts with `profile: sample` (or full) and holds the stage groups "
            "(`python scripts/pipeline_files.py` writes them)"
        )
    if not isinstance(data, dict):
        raise BabelforgeError(f"{path}: expected a mapping of stage groups at the top level")
    if "profile" not in data:
        raise BabelforgeError(
            f"{path}: no `profile:` line; put `profile: sample` (or full) at its top: it selects the build's settings"
        )
    return data


def read_yaml(path: str | Path) -> Any:
    """A YAML file's content; a syntax error or bytes that are not UTF-8 are one line naming the file."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.safe_load(handle)
    except yaml.YAMLError as error:
        raise BabelforgeError(yaml_error_line(path, error)) from None
    except UnicodeDecodeError as error:
        raise BabelforgeError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None


def yaml_error_line(path: Path, error: Exception) -> str:
    """A YAML parse error as `file:line:column: problem` on one line (PyYAML's own text spans lines)."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    return f"{where}: YAML syntax error: {problem}" + (f" ({context})" if context else "")


def profile_of(params: dict[str, Any]) -> str:
    """The build profile params.yaml selects (`sample` when it names none)."""
    profile = params.get("profile", "sample")
    if profile not in PROFILES:
        raise BabelforgeError(f"params.yaml: profile is {profile!r}; one of {', '.join(PROFILES)}")
    return profile


def for_profile(value: Any, profile: str, where: str) -> Any:
    """`value` with every `{sample: ..., full: ...}` choice in it (at any depth) resolved.

    A mapping whose keys are all profile names is such a choice; it must name `profile`.
    """
    if isinstance(value, dict) and value and set(value) <= set(PROFILES):
        if profile not in value:
            raise BabelforgeError(f"params.yaml: {where} has no value for profile {profile!r} (has {sorted(value)})")
        return for_profile(value[profile], profile, where)
    if isinstance(value, dict):
        return {key: for_profile(item, profile, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [for_profile(item, profile, f"{where}[{index}]") for index, item in enumerate(value)]
    return value


def profile_section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """The group `name` with its per-profile choices resolved for the selected profile."""
    return for_profile(section(params, name), profile_of(params), name)


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """The group `name` of params.yaml; an error naming the file's groups if missing."""
    if name not in params:
        raise BabelforgeError(f"params.yaml has no '{name}' group (it has: {', '.join(sorted(params))})")
    return params[name]
