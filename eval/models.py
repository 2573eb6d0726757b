"""Dual-encoder adapters: one small interface over CLIP, SigLIP and VisionTextDualEncoder.

`DualEncoder.encode_images(images)` / `encode_texts(texts)` return L2-normalised
float32 numpy arrays, one row per input. A model is a Hub id with a pinned revision or
a local directory (its revision is then a content hash of the directory, so results and
caches change when the weights do). fp16 on a GPU, fp32 on CPU; `auto` (or no device)
is resolved by `babelforge.core.device.resolve_device`. The tiny random CLIP of the `sample`
profile and the tests is built by `babelforge.eval.sample.tiny_clip`.
"""

from __future__ import annotations

import hashlib
import os
import socket
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
from PIL import Image

from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import read_rgb
from babelforge.core.io import sha256_file
from babelforge.core.progress import info

SUPPORTED_TYPES = ("clip", "siglip", "vision-text-dual-encoder")


def directory_hash(path: str | os.PathLike) -> str:
    """sha256 over the relative names and contents of every file below `path`."""

    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(root).as_posix()}\0{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def dtype_for(device: str):
    """fp16 on a GPU, fp32 on CPU (half precision is slow or unsupported there)."""
    import torch

    return torch.float16 if device.startswith("cuda") else torch.float32


class DualEncoder:
    """A loaded dual encoder: `name`, `revision`, `encode_images`, `encode_texts`."""

    def __init__(
        self,
        model,
        tokenizer,
        image_processor,
        name: str,
        revision: str,
        device: str,
        text_padding: str | bool = True,
        max_text_length: int | None = None,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.name = name
        self.revision = revision
        self.device = device
        self.text_padding = text_padding
        self.max_text_length = max_text_length
        self.truncated_texts = 0  # texts longer than the text encoder reads, cut to max_text_length

    @property
    def dtype(self):
        return next(self.model.parameters()).dtype

    @property
    def precision(self) -> str:
        """`float16` / `float32`: part of the image-embedding cache key."""
        return str(self.dtype).removeprefix("torch.")

    def encode_images(self, images: Iterable, batch_size: int = 64) -> np.ndarray:
        """Images are PIL images or paths (opened lazily, one batch at a time, by
        `babelforge.core.images.read_rgb`)."""
        import torch

        batches, batch = [], []

        def flush():
            pixels = self.image_processor(images=batch, return_tensors="pt")["pixel_values"]
            with torch.inference_mode():
                features = self.model.get_image_features(pixel_values=pixels.to(self.device, self.dtype))
            batches.append(_normalized(features))
            batch.clear()

        for image in images:
            if not isinstance(image, Image.Image):
                image = read_rgb(image)  # upright RGB, alpha on white; one line naming a bad file
            batch.append(image.convert("RGB") if image.mode != "RGB" else image)
            if len(batch) == batch_size:
                flush()
        if batch:
            flush()
        return np.concatenate(batches) if batches else np.zeros((0, self.embedding_dim), np.float32)

    def count_truncated(self, texts: Sequence[str]) -> int:
        """How many of `texts` the text encoder cannot read whole (more tokens than max_text_length)."""
        if not self.max_text_length or not texts:
            return 0
        lengths = [len(ids) for ids in self.tokenizer(list(texts), truncation=False)["input_ids"]]
        return sum(length > self.max_text_length for length in lengths)

    def encode_texts(self, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
        import torch

        truncated = self.count_truncated(texts)
        if truncated:
            # Counted like a bad row, not hidden: a long caption is scored on its first tokens only.
            self.truncated_texts += truncated
            info(
                f"{self.name}: {truncated} of {len(texts)} texts cut to the text encoder's {self.max_text_length} tokens"
            )
        out = []
        for start in range(0, len(texts), batch_size):
            tokens = self.tokenizer(
                list(texts[start : start + batch_size]),
                padding=self.text_padding,
                truncation=True,
                max_length=self.max_text_length,
                return_tensors="pt",
            )
            inputs = {"input_ids": tokens["input_ids"].to(self.device)}
            if "attention_mask" in tokens and self.text_padding != "max_length":
                inputs["attention_mask"] = tokens["attention_mask"].to(self.device)
            with torch.inference_mode():
                features = self.model.get_text_features(**inputs)
            out.append(_normalized(features))
        return np.concatenate(out) if out else np.zeros((0, self.embedding_dim), np.float32)

    @property
    def embedding_dim(self) -> int:
        config = self.model.config
        return int(getattr(config, "projection_dim", None) or config.text_config.hidden_size)


def _normalized(features) -> np.ndarray:
    array = features.float().cpu().numpy()
    return (array / np.maximum(np.linalg.norm(array, axis=-1, keepdims=True), 1e-12)).astype(np.float32)


def folder_like(spec: str) -> bool:
    """A model id that can only name a folder: it exists, starts with `.`, `/` or `~`, ends with
    `/`, has more than one `/`, or its first part is a folder here (`models/my_clip`). A Hub id
    is `name` or `owner/name`."""
    parts = spec.split("/")
    return (
        Path(spec).exists()
        or spec.startswith((".", "/", "~"))
        or spec.endswith("/")
        or len(parts) > 2
        or (len(parts) == 2 and Path(parts[0]).is_dir())
    )


def in_hub_cache(spec: str) -> bool:
    """Whether this machine's Hugging Face cache holds any revision of the Hub model `spec`."""
    from huggingface_hub import constants

    return (Path(constants.HF_HUB_CACHE) / f"models--{spec.replace('/', '--')}").is_dir()


def missing_folder(spec: str, revision: str | None) -> str | None:
    """Why `spec` cannot be loaded, when it names a model folder that is not there (None when it
    is a folder or may be a Hub model): folder-like, or without a pinned revision and unknown to
    the Hub cache (a Hub model needs its revision anyway)."""
    path = Path(spec)
    if path.is_dir():
        return None
    if path.exists():
        return f"not a folder: {spec}"
    if folder_like(spec):
        return f"no such folder: {spec}"
    if not revision and not in_hub_cache(spec):
        return f"no such folder: {spec} (a Hub model is ID@REVISION)"
    return None


def load_model(spec: str, revision: str | None = None, device: str | None = None) -> DualEncoder:
    """A local directory, or a Hub id at `revision` (required: results must be reproducible)."""
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoTokenizer

    device = resolve_device(device)
    local = Path(spec)
    if local.is_dir():
        source, name, revision, hub_args = str(local), spec, "sha256:" + directory_hash(local), {}
    elif folder_like(spec):
        raise BabelforgeError(
            f"model {spec}: not a model directory; build it (dvc repro tiny_clip) or fix params eval.models"
        )
    else:
        if not revision:
            raise BabelforgeError(
                f"model {spec}: no revision pinned; add `revision:` (a commit sha) to its params eval.common.models entry"
            )
        source, name, hub_args = spec, spec, _hub_access(spec, revision)
    try:
        config = AutoConfig.from_pretrained(source, **hub_args)
    except OSError as error:
        raise BabelforgeError(
            f"model {spec}@{revision}: cannot load ({str(error).splitlines()[0]}); "
            "offline, use a local directory or pre-fill the Hugging Face cache"
        ) from None
    if config.model_type not in SUPPORTED_TYPES:
        raise BabelforgeError(
            f"model {spec}: type {config.model_type!r} is not a dual encoder ({', '.join(SUPPORTED_TYPES)})"
        )
    model = AutoModel.from_pretrained(source, dtype=dtype_for(device), **hub_args).to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(source, **hub_args)
    # The fast processors need torchvision; the PIL ones give the reference preprocessing.
    image_processor = AutoImageProcessor.from_pretrained(source, use_fast=False, **hub_args)
    # SigLIP was trained on texts padded to a fixed 64 tokens without an attention mask.
    siglip = config.model_type == "siglip"
    # Truncate to what both the position table and the tokenizer allow (RoBERTa-style text
    # towers count 2 padding positions in max_position_embeddings; the tokenizer knows).
    limits = [
        getattr(getattr(config, "text_config", None), "max_position_embeddings", None),
        getattr(tokenizer, "model_max_length", None),
    ]
    limits = [int(n) for n in limits if n and n < 1_000_000]
    max_length = min(limits) if limits else None
    return DualEncoder(
        model,
        tokenizer,
        image_processor,
        name=name,
        revision=revision,
        device=device,
        text_padding="max_length" if siglip else True,
        max_text_length=max_length,
    )


def _hub_access(spec: str, revision: str) -> dict:
    """from_pretrained arguments for a Hub model: the local cache when it has the revision,
    else the Hub; offline (no cache, Hub unreachable) a clear error at once instead of
    minutes of retries."""

    from huggingface_hub import constants, try_to_load_from_cache

    cached = try_to_load_from_cache(spec, "config.json", revision=revision)
    if isinstance(cached, str):
        return {"revision": revision, "local_files_only": True}
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    if not constants.HF_HUB_OFFLINE:
        try:
            socket.create_connection((host, 443), timeout=5).close()
            return {"revision": revision}
        except OSError:
            pass
    raise BabelforgeError(
        f"model {spec}@{revision}: not in the Hugging Face cache and {host} is unreachable (or HF_HUB_OFFLINE is set); "
        "pre-fill the cache (huggingface-cli download) or use a local directory in params eval.models"
    )
