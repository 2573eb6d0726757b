"""The settings every evaluation stage shares: the `eval.common` group and the base Configs of the
stages (`EvalStageConfig`; `ImageStageConfig` for those that encode images).

An evaluation stage is a module `eval/<task>/stage.py` with a typed `Config` (its group
`eval.<task>` plus `common`, the `eval.common` group, and the `paths:` group) and
`run(config)`; the command `babelforge eval_<task>` runs it (babelforge.commands).
Heavy libraries are imported inside the functions that use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from babelforge.core.bad_rows import BadRowPolicy
from babelforge.core.config import from_group, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.stages import Paths, stage_paths
from babelforge.eval.cache import EvalRunnerConfig
from babelforge.eval.families import local_revision_line, split_family


@dataclass(frozen=True)
class ModelSpec:
    """One model of `eval.common.models`."""

    id: str = setting(
        "",
        "a model spec, [FAMILY:]ID[@REVISION][+IMAGE_SPEC] (`babelforge eval_zeroshot --help` lists the "
        "families): a local folder (detected by its files) or a Hub id pinned at a commit",
    )
    revision: str | None = setting(
        None, "the model's Hub commit sha when `id` has no @REVISION; a local directory is hashed instead"
    )

    def __post_init__(self):
        # Refused as the settings are read, not once the images are screened and the model loads.
        folder = split_family(self.id.strip())[1].partition("+")[0].partition("@")[0]
        if self.revision and Path(folder).is_dir():
            raise BabelforgeError(local_revision_line(self.id, folder, "", self.revision))


@dataclass(frozen=True)
class CommonConfig:
    """The `eval.common` group: settings every evaluation stage shares."""

    GROUP = "eval.common"
    seed: int = setting(0, "bootstrap / control-subset seed, recorded in every result row", minimum=0)
    device: str = setting("auto", "auto (cuda when present, fp16; else cpu, fp32), cpu, cuda or cuda:<n>")
    threads: int | None = setting(
        {"sample": 1, "full": None},
        "torch CPU threads (tiny models are fastest on one; null: torch's default)",
        minimum=1,
    )
    cache: str = setting(
        ".cache/eval/image_embeddings",
        "image embeddings per model + revision + image set + precision (not a DVC output)",
    )
    registry: str | None = setting(None, "language registry TSV (null: resources/languages.tsv)")
    # The image sets and caption sets of every eval task, in one place. MVL-SIB's images are the thumbnails of a
    # small curated, checksummed manifest (mvl_sib_images): eval_mvl_sib always fails on a bad one.
    on_bad_row: Literal["skip", "fail"] = setting(
        "skip",
        "an image of an eval image set that cannot be used (missing, empty, not an image, truncated, over "
        "PIL's size limit), or a caption of a caption set (null, a number, empty, a NUL, not UTF-8): skip "
        "(quarantine it in the run JSON, score the rest) or fail (stop at it)",
    )
    max_bad_fraction: float = setting(
        0.01,
        "stop when more than this share of an image set or caption set is bad (the wrong folder, list or file, "
        "a broken copy)",
        minimum=0,
        maximum=1,
    )
    models: list[ModelSpec] = setting(
        {
            # the tiny local CLIPs the eval_tiny_clip stage builds
            "sample": [ModelSpec(f"models/tiny_clip/s{seed}") for seed in (0, 1, 2)],
            # the paper's other models need their Hub commit pinned (resources/papers/models.tsv lists their
            # specs), e.g. mclip:M-CLIP/XLM-Roberta-Large-Vit-B-32@<sha>, hf:google/siglip-base-patch16-256-multilingual@<sha>
            "full": [
                ModelSpec("openai/clip-vit-base-patch32", "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"),
                ModelSpec(
                    "open_clip:xlm-roberta-base-ViT-B-32@laion5b_s13b_b90k"
                ),  # OpenCLIP XLM-R B-32 (pretrained tag)
                ModelSpec("open_clip:nllb-clip-base-siglip@v1"),  # NLLB-SigLIP base
            ],
        },
        "model specs [FAMILY:]ID[@REVISION][+IMAGE_SPEC] (docs/guides/evaluate.md), evaluated one at a time: "
        "a local folder or a pinned Hub id",
    )

    @property
    def image_policy(self) -> BadRowPolicy:
        """The bad-row policy of the eval image sets (zero-shot, retrieval, clipscore) and caption sets."""
        return BadRowPolicy(self.on_bad_row, self.max_bad_fraction)


@dataclass(frozen=True)
class EvalStageConfig:
    """The settings every eval stage shares: `eval.common` (the models, the device, the registry), the
    profile and the paths. A task that encodes texts only extends it; one that encodes images extends
    `ImageStageConfig`."""

    common: CommonConfig = from_group(CommonConfig, "eval.common", "settings every eval stage shares")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


@dataclass(frozen=True)
class ImageStageConfig(EvalStageConfig):
    """An eval stage that encodes images (zero-shot, retrieval, clipscore, MVL-SIB): adds `eval.runner`,
    how the image embedding cache is computed; each stage's Config adds its own group's fields."""

    runner: EvalRunnerConfig = from_group(EvalRunnerConfig, "eval.runner", "how images are encoded (eval.runner)")


def model_ids(config: EvalStageConfig) -> list[str]:
    """The model ids an eval run encodes with: what an ad-hoc run's folder is named after."""
    return [model.id for model in config.common.models]
