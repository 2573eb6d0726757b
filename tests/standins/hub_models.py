"""Tiny real models under the real Hub ids the `full` profile names, at the commits it pins, for its rehearsal
against the loopback Hub (tests/hub_standin.py, `HF_ENDPOINT`).

    with HubStandIn() as hub:
        commits = publish_full_profile_models(hub, work)   # {repo_id: commit}
        ...  # HF_ENDPOINT=hub.url: the nllb stage, load_kiwi and the eval model specs read them

What is published, and where its pin is read (the project's own readers: `load_params` and
`babelforge.eval.pins`, the inventory `babelforge pins` lists):
- `nllb.source` (facebook/nllb-200-distilled-1.3B) at `nllb.revision`: the tiny NLLB's Hugging Face files
  (`babelforge.translation.tiny.build_tiny_hf`), which the nllb stage downloads and converts with CTranslate2;
- `captions.tag.kiwi_model` (Unbabel/wmt22-cometkiwi-da) at `captions.tag.kiwi_revision` (a deterministic
  commit while that is unset): the tiny COMETKiwi (`babelforge.captions.qe.build_tiny_kiwi`) in the Hub
  repo's layout, `hparams.yaml` + `checkpoints/model.ckpt`, its hparams naming its encoder by the real name
  (`microsoft/infoxlm-large`, `babelforge.eval.pins.KIWI_ENCODER`) as the real checkpoint does;
- that encoder (`KIWI_ENCODER`, on `main`, as COMET reads it by name): the tiny one's tokenizer and config;
- every Hub model of `eval.common.models` (openai/clip-vit-base-patch32) at its `revision`: the tiny CLIP
  (`babelforge.eval.sample.tiny_clip_stage.build_tiny_clip`).

The models are built once into `<work>/hub-models-v<RECIPE>/` (each folder written whole or not at all, under a
lock, so parallel test workers build it once); a later call only reads the files (about a second).
"""

from __future__ import annotations

import fcntl
import os
import re
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.io import atomic_directory
from babelforge.core.params import load_params
from babelforge.core.pins import is_commit
from babelforge.eval.pins import KIWI_ENCODER, build_model_inputs, eval_model_inputs, value
from tests.hub_standin import HubStandIn

REPO = Path(__file__).resolve().parents[2]
PARAMS = REPO / "params.yaml"
SIB_DIR = REPO.parent / "shared" / "data" / "sib-200" / "annotated"  # the source mirror's SIB-200
PROFILE = "full"
RECIPE = 1  # bump when what is built changes: a new folder, the old one left alone
ENCODER_FILES = re.compile(
    r"(config\.json|sentencepiece\.bpe\.model|tokenizer\.json|tokenizer_config\.json|special_tokens_map\.json)"
)


@dataclass(frozen=True)
class TinyModels:
    """The folders of the built models."""

    nllb: Path  # Hugging Face checkpoint of the tiny NLLB
    kiwi: Path  # the tiny COMETKiwi in the Hub repo's layout (its encoder named by KIWI_ENCODER)
    kiwi_encoder: Path  # the encoder's tokenizer + config, published as KIWI_ENCODER
    kiwi_local: Path  # the same checkpoint as the sample profile keeps it (encoder bundled): for comparisons
    clip: Path  # the tiny CLIP


@dataclass(frozen=True)
class HubModel:
    """One repo to publish: its id, the commit the full profile pins (None: unpinned) and what stands in."""

    repo_id: str
    commit: str | None
    role: str  # nllb | kiwi | kiwi-encoder | clip


def full_profile_models(params_path: Path = PARAMS) -> list[HubModel]:
    """The Hub models the full profile's builds and evaluations read, with their pins from params.yaml."""
    params = load_params(params_path)
    kiwi = value(params, "captions.tag.kiwi_model", PROFILE)
    nllb = value(params, "nllb.source", PROFILE)
    models = []
    for item in build_model_inputs(params, PROFILE, lambda path: False) + eval_model_inputs(params, PROFILE):
        if item.kind != "hub-model" or not item.name.startswith("hub:"):
            continue  # a service, or an open_clip built-in name (open_clip's own registry)
        repo = item.name.removeprefix("hub:")
        role = {nllb: "nllb", kiwi: "kiwi", KIWI_ENCODER: "kiwi-encoder"}.get(repo, "clip")
        if item.pin and not is_commit(item.pin):
            raise ValueError(
                f"{repo}: pinned by {item.pin!r} at {item.home.where}; the stand-in publishes commits only"
            )
        models.append(HubModel(repo, item.pin, role))
    return models


def build_tiny_models(work: Path, sib_dir: Path = SIB_DIR, seed: int = 0) -> TinyModels:
    """The tiny models under `<work>/hub-models-v<RECIPE>/`, built on the first call, found on the next."""
    root = Path(work) / f"hub-models-v{RECIPE}"
    models = TinyModels(root / "nllb", root / "kiwi", root / "kiwi-encoder", root / "kiwi-local", root / "clip")
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder at a time; released when the file closes
        if not models.nllb.is_dir():
            from babelforge.translation.tiny import build_tiny_hf

            with atomic_directory(models.nllb) as tmp:
                build_tiny_hf(tmp, sib_dir=sib_dir, seed=seed)
        if not models.kiwi_local.is_dir():
            from babelforge.captions.qe import build_tiny_kiwi
            from babelforge.translation.tiny import training_text

            # its tokenizer learns the CLIP templates and SIB-200 sentences of every language (many scripts)
            build_tiny_kiwi(models.kiwi_local, training_text(Path(sib_dir)), seed=seed)
        if not models.kiwi.is_dir() or not models.kiwi_encoder.is_dir():
            with atomic_directory(models.kiwi_encoder) as tmp:
                for path in sorted((models.kiwi_local / "encoder").iterdir()):
                    if ENCODER_FILES.fullmatch(path.name):
                        (tmp / path.name).write_bytes(path.read_bytes())
            with atomic_directory(models.kiwi) as tmp:
                hub_layout_kiwi(models.kiwi_local, tmp, KIWI_ENCODER)
        if not models.clip.is_dir():
            from babelforge.eval.sample.tiny_clip_stage import build_tiny_clip

            with atomic_directory(models.clip) as tmp:
                build_tiny_clip(tmp, seed=seed)
    return models


def hub_layout_kiwi(local: Path, out: Path, encoder: str) -> None:
    """The checkpoint of `local` (encoder bundled) as the Hub repo holds it: `hparams.yaml` and
    `checkpoints/model.ckpt`, both naming `encoder` (a Hub id) as `pretrained_model`, no encoder folder."""
    import torch
    import yaml

    checkpoint = torch.load(local / "checkpoints" / "model.ckpt", map_location="cpu", weights_only=False)
    checkpoint["hyper_parameters"] = {**checkpoint["hyper_parameters"], "pretrained_model": encoder}
    (out / "checkpoints").mkdir()
    torch.save(checkpoint, out / "checkpoints" / "model.ckpt")
    hparams = yaml.safe_load((local / "hparams.yaml").read_text(encoding="utf-8"))
    hparams["pretrained_model"] = encoder
    (out / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True), encoding="utf-8")


def folder_files(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()
    }


def publish_full_profile_models(
    hub: HubStandIn, work: Path, sib_dir: Path = SIB_DIR, params_path: Path = PARAMS, seed: int = 0
) -> dict[str, str]:
    """Publish a tiny model under every Hub id of `full_profile_models` on `hub`, at its pinned commit (an unpinned
    one on `main` at the stand-in's own commit); returns {repo_id: commit}. Builds into `work` once."""
    built = build_tiny_models(work, sib_dir, seed)
    folders = {"nllb": built.nllb, "kiwi": built.kiwi, "kiwi-encoder": built.kiwi_encoder, "clip": built.clip}
    commits = {}
    for model in full_profile_models(params_path):
        commits[model.repo_id] = hub.add(model.repo_id, folder_files(folders[model.role]), commit=model.commit)
    return commits


if __name__ == "__main__":  # build (or find) the models and say how long it took
    import sys
    import time

    start = time.perf_counter()
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TMPDIR", "/tmp")) / "babelforge-hub-models"
    with HubStandIn() as stand_in:
        published = publish_full_profile_models(stand_in, folder)
    print(f"{len(published)} models in {time.perf_counter() - start:.1f} s under {folder}: {published}")
