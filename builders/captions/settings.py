"""The `captions` params group, resolved for the active profile, and shared stage plumbing.

A leaf value may be given per profile as `{sample: ..., full: ...}` (the convention of the
whole params.yaml); everything else applies to both profiles.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.core.errors import BabelforgeError

DATA_DIR = Path("data/captions")
SOURCE_FILE = "source.parquet"
REFERENCES_FILE = "references.parquet"
HYPOTHESES_FILE = "hypotheses.parquet"
ATTRIBUTES_FILE = "attributes.parquet"
SELECTED_FILE = "selected.parquet"
KEY = ["caption_id", "lang", "hyp_rank"]


def captions_params(params: dict, part: str) -> dict[str, Any]:
    """`captions.<part>` with per-profile leaves resolved for `profile`."""
    from builders.core.params import for_profile, profile_of, section

    profile = profile_of(params)
    group = section(params, "captions")
    if part not in group:
        raise BabelforgeError(f"params.yaml: captions has no '{part}' group (it has: {', '.join(sorted(group))})")
    return for_profile(group[part] or {}, profile, f"captions.{part}")


def load_registry(path: str | None):
    """The project registry, or the one at `path` (tests, or before resources/languages.tsv exists)."""
    from builders.core.languages import read_registry, registry

    if path:
        return read_registry(path)
    try:
        return registry()
    except FileNotFoundError:
        raise BabelforgeError(
            "resources/languages.tsv not found: the language registry is needed to map language codes"
        ) from None


def add_common_arguments(parser) -> None:
    from builders.core.params import DEFAULT_PARAMS

    parser.add_argument("--params", default=DEFAULT_PARAMS, help="params file (groups `profile`, `captions`)")
    parser.add_argument("--registry", default=None, help="language registry TSV (default: resources/languages.tsv)")
    parser.add_argument("--data-dir", default=str(DATA_DIR), help="folder of the caption artifacts")
