"""params.yaml access: one file, grouped by stage (DVC tracks each group)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.core.errors import BabelforgeError

DEFAULT_PARAMS = "params.yaml"


def load_params(path: str | Path = DEFAULT_PARAMS) -> dict[str, Any]:
    import yaml

    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{path}: no params file; run from the project root or pass --params")
    with path.open(encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    if not isinstance(data, dict):
        raise BabelforgeError(f"{path}: expected a mapping of stage groups at the top level")
    return data


def section(params: dict[str, Any], name: str) -> dict[str, Any]:
    """The group `name` of params.yaml; an error naming the file's groups if missing."""
    if name not in params:
        raise BabelforgeError(
            f"params.yaml has no '{name}' group (it has: {', '.join(sorted(params))})"
        )
    return params[name]
