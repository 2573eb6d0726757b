"""What a stage loads before it scores: its input files and image folders (checked, with the stage
that builds them named; the images each model can read, screened under eval.common's bad-row
policy), the ImageNet class list, the models of `eval.common` one at a time, and the
image-embedding cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from babelforge.core.bad_rows import BadRowPolicy, Quarantine, summary_line
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.imagenet import read_imagenet_classes
from babelforge.core.progress import info
from babelforge.eval.cache import EvalRunnerConfig, ImageEmbeddingCache
from babelforge.eval.config import CommonConfig
from babelforge.eval.families import parse_spec
from babelforge.eval.images import ImageSet, screen_images
from babelforge.eval.models import check_stated_dims, load_model


def require(path: str | Path, what: str, stage: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{what} {path} is missing; build it first (dvc repro {stage}) or fix params.yaml")
    return path


def require_images(path: str | Path, setting_name: str) -> Path:
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(
            f"image folder {path} is missing; provide it (full profile) or set params.yaml "
            f"{setting_name} (sample profile: dvc repro eval_images)"
        )
    return path


def usable_images(
    image_set: ImageSet, common: CommonConfig, source: str | Path, stage: str, policy: BadRowPolicy | None = None
) -> tuple[ImageSet, Quarantine]:
    """The images every model of the run scores: `image_set` without those `open_rgb` cannot read,
    under `policy` (default: eval.common's on_bad_row / max_bad_fraction); logs the counts."""
    usable, quarantine = screen_images(image_set, policy or common.image_policy, source, common.cache)
    info(f"{stage}: {source}: {summary_line('images', quarantine.summary())}")
    return usable, quarantine


def imagenet_classes() -> list[tuple[int, str]]:

    return [(c.class_idx, c.wnid) for c in read_imagenet_classes()]


# ---------------------------------------------------------------- models and the embedding cache


def load_models(common: CommonConfig) -> Iterator:
    """The models of `common.models`, every one loaded and checked now (`load_model`'s checks: the
    towers' vector sizes, a damaged weights file...), before the stage reads its inputs and scores an
    earlier model: a model that cannot be scored is one line in seconds, not after minutes of reading
    and encoding. Then given one at a time, to keep one in memory: the first, loaded last here, is kept
    (a one-model run loads it once); the others are loaded again when their turn comes."""

    if not common.models:
        raise BabelforgeError(
            "params.yaml eval.common.models is empty; list models as {id: <model spec or path>, "
            "revision: <sha>} or pass --model SPEC"
        )
    for spec in common.models:  # what the configs state, before torch is imported for the threads
        check_stated_dims(parse_spec(spec.id, spec.revision))
    if common.threads:
        import torch

        # Tiny models on a shared CPU run faster on one thread than on contended several.
        torch.set_num_threads(common.threads)
    device = resolve_device(common.device)
    first, *others = common.models
    for spec in others:
        load_model(spec.id, spec.revision, device)  # checked, then let go
    return one_at_a_time(load_model(first.id, first.revision, device), others, device)


def one_at_a_time(first, others: list, device: str) -> Iterator:
    yield first
    del first  # the caller's loop holds it until the next model is loaded
    for spec in others:
        yield load_model(spec.id, spec.revision, device)


def image_cache(common: CommonConfig, runner: EvalRunnerConfig):
    """The image-embedding cache of `common.cache`, encoding on the `eval.runner` runner; use it as a
    context manager, entered before the first model is scored: under the ray runner it asks the
    cluster's address first and is the stage run's one actor pool, freed (and a Ray it started shut
    down) at the end."""

    return ImageEmbeddingCache(common.cache, runner, threads=common.threads)
