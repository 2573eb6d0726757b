"""The `mvl_sib` group of params.yaml, with defaults (a missing params file means all defaults)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from builders.core.errors import BabelforgeError

DEFAULTS: dict[str, Any] = {
    "sib_dir": "data/raw/sib-200/annotated",
    "languages": "all",
    "seed": 42,
    "instances_per_sentence": 3,
    "n_positive_images": 5,
    "n_positive_sentences": 4,
    "n_negatives": 3,
    "sentence_pool": "split",
    "tasks": {"i2s": [1, 3, 5], "s2i": [1, 3, 5], "t2s": [1], "s2t": [1, 3, 5]},
    "out_dir": "data/mvl_sib",
    "images": {
        "manifest": "resources/mvl_sib_images.tsv",
        "per_topic": 10,
        "thumbnail_px": 640,
        "sample_seed": 0,
        "out_dir": "data/mvl_sib_images",
    },
    "check": {"report": "reports/mvl_sib/check.json", "summary": "reports/mvl_sib/summary.json"},
}


def load_settings(params_path: str | Path) -> tuple[str, dict[str, Any]]:
    """(profile, mvl_sib group merged over DEFAULTS). A missing params file means all defaults."""
    from builders.core.params import for_profile, load_params, profile_of

    params = load_params(params_path) if Path(params_path).exists() else {}
    profile = profile_of(params)
    group = params.get("mvl_sib") or {}
    if not isinstance(group, dict):
        raise BabelforgeError(f"{params_path}: mvl_sib must be a mapping")
    group = for_profile(group, profile, "mvl_sib")
    unknown = sorted(set(group) - set(DEFAULTS))
    if unknown:
        raise BabelforgeError(f"{params_path}: unknown mvl_sib key(s) {unknown}; known: {sorted(DEFAULTS)}")
    settings = {**DEFAULTS, **group}
    for nested in ("images", "check"):
        extra = sorted(set(group.get(nested) or {}) - set(DEFAULTS[nested]))
        if extra:
            raise BabelforgeError(f"{params_path}: unknown mvl_sib.{nested} key(s) {extra}")
        settings[nested] = {**DEFAULTS[nested], **(group.get(nested) or {})}
    return profile, settings
