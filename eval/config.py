"""The settings every evaluation stage shares: the `eval.common` group and the base Config of the
stages that encode images.

An evaluation stage is a module `eval/<task>/stage.py` with a typed `Config` (its group
`eval.<task>` plus `common`, the `eval.common` group, and the `paths:` group) and
`run(config)`; the command `babelforge eval_<task>` runs it (babelforge.commands).
Heavy libraries are imported inside the functions that use them.
"""

from __future__ import annotations

from dataclasses import dataclass

from babelforge.core.config import Paths, from_group, setting, stage_paths
from babelforge.eval.cache import EvalRunnerConfig


@dataclass(frozen=True)
class ModelSpec:
    """One model of `eval.common.models`."""

    id: str = setting("", "a Hub id (pin its `revision`) or a local model directory")
    revision: str | None = setting(None, "the Hub commit sha; a local directory is hashed instead")


@dataclass(frozen=True)
class CommonConfig:
    """The `eval.common` group: settings every evaluation stage shares."""

    GROUP = "eval.common"
    seed: int = setting(0, "bootstrap / control-subset seed, recorded in every result row")
    device: str = setting("auto", "auto (cuda when present, fp16; else cpu, fp32), cpu, cuda or cuda:<n>")
    threads: int | None = setting(
        1, "torch CPU threads (sample 1: tiny models are fastest on one; null: torch's default)"
    )
    cache: str = setting(
        ".cache/eval/image_embeddings",
        "image embeddings per model + revision + image set + precision (not a DVC output)",
    )
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)")
    models: list[ModelSpec] = setting(
        [ModelSpec(f"models/tiny_clip/s{seed}") for seed in (0, 1, 2)],
        "models to evaluate, one at a time (sample: the tiny CLIPs; full: Hub ids with pinned revisions)",
    )


@dataclass(frozen=True)
class ImageStageConfig:
    """The settings every eval stage that encodes images shares (zero-shot, retrieval, clipscore,
    MVL-SIB); each stage's Config adds its own group's fields to these."""

    common: CommonConfig = from_group(CommonConfig, "eval.common", "settings every eval stage shares")
    runner: EvalRunnerConfig = from_group(EvalRunnerConfig, "eval.runner", "how images are encoded (eval.runner)")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()
