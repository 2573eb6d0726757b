"""What every artifact records about how it was made.

Secrets never pass through here: keys and tokens come from the environment at the
point of use and are not part of params, sources or models.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import babelforge

# The `sample` profile builds offline with randomly initialised tiny models: its translations,
# scores and selections are placeholders that test the pipeline, so every record says so and no
# card, metric or publish step can pass a sample build off as the benchmark.
SAMPLE_MODELS = "random tiny models (not for research use)"


def provenance(
    stage: str,
    params: Mapping[str, Any] | None = None,
    sources: Mapping[str, Any] | None = None,
    models: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A JSON-able record: package version, stage, the params it used, sources and models.

    `params` carries the build profile under `profile` (as params.yaml does); the record then has
    a `build` entry (`build_record`) that cards, metrics and publish read. `sources` maps a source
    name to its version/sha256 record; `models` maps a role to its id + revision (or local path +
    content hash). No timestamps, so the record is byte-stable for the same inputs.
    """
    record = {
        "package": "babelforge",
        "version": babelforge.__version__,
        "stage": stage,
        "params": dict(params or {}),
        "sources": dict(sources or {}),
        "models": dict(models or {}),
    }
    profile = (params or {}).get("profile")
    return {**record, "build": build_record(profile)} if profile else record


def build_record(profile: str) -> dict[str, str]:
    """What a record says about the build: its profile and, for `sample`, that the models are random tiny ones."""
    return {"profile": profile, **({"models": SAMPLE_MODELS} if profile == "sample" else {})}


def profile_of_record(record: Mapping[str, Any]) -> str | None:
    """The profile a provenance record names: its `build` entry, else the `profile` of its params
    (records written before `build` existed); None when it names none."""
    return (record.get("build") or {}).get("profile") or (record.get("params") or {}).get("profile")


def build_profile(records: Iterable[Mapping[str, Any]]) -> str | None:
    """The profile of what was built from artifacts with these records: `sample` when any of them
    is (one sample input makes the whole a sample build), else the one profile they name, else None."""
    profiles = {profile_of_record(record or {}) for record in records} - {None}
    if "sample" in profiles:
        return "sample"
    return profiles.pop() if len(profiles) == 1 else None
