"""What every artifact records about how it was made.

Secrets never pass through here: keys and tokens come from the environment at the
point of use and are not part of params, sources or models.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import babelforge


def provenance(
    stage: str,
    params: Mapping[str, Any] | None = None,
    sources: Mapping[str, Any] | None = None,
    models: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON-able record: package version, stage, the params it used, sources and models.

    `sources` maps a source name to its version/sha256 record; `models` maps a role to
    its id + revision (or local path + content hash). No timestamps, so the record is
    byte-stable for the same inputs.
    """
    return {
        "package": "babelforge",
        "version": babelforge.__version__,
        "stage": stage,
        "params": dict(params or {}),
        "sources": dict(sources or {}),
        "models": dict(models or {}),
    }
