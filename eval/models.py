"""Dual encoders: one interface over every model family (`babelforge.eval.families`).

`DualEncoder.encode_images(images)` / `encode_texts(texts)` return L2-normalised
float32 numpy arrays, one row per input, whatever the family. `load_model(spec)` loads a model
spec (`[FAMILY:]ID[@REVISION][+IMAGE_SPEC]`): a Hub id with a pinned revision or a local
directory (its revision is then a content hash of the directory, so results and caches change
when the weights do). fp16 on a GPU, fp32 on CPU; `auto` (or no device) is resolved by
`babelforge.core.device.resolve_device`. The tiny random CLIP of the `sample` profile and the
tests is built by `babelforge.eval.sample.tiny_clip_stage`.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
from PIL import Image

from babelforge.core.datasets import resolve
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import read_rgb
from babelforge.core.io import directory_hash
from babelforge.core.progress import info
from babelforge.eval.families import family, parse_spec


def dtype_for(device: str):
    """fp16 on a GPU, fp32 on CPU (half precision is slow or unsupported there)."""
    import torch

    return torch.float16 if device.startswith("cuda") else torch.float32


class DualEncoder:
    """A loaded dual encoder, whatever its family: `name`, `revision`, `encode_images`, `encode_texts`.

    The shared half of every family: images read and batched, texts batched, the texts longer than
    the text encoder reads counted (`truncated_texts`) and logged, outputs L2-normalised float32.
    A family's subclass (`babelforge.eval.families.<family>`) gives the other half: its own
    preprocessing and tokenizer in `_encode_image_batch(images)` / `_encode_text_batch(texts)`
    (tensors or arrays, one row per input), `token_lengths(texts)` and `embedding_dim`.
    """

    family = "hf"

    def __init__(
        self,
        name: str,
        revision: str,
        device: str,
        max_text_length: int | None = None,
        ref=None,
        dtype=None,
    ):
        self.name = name
        self.revision = revision
        self.device = device
        self.max_text_length = max_text_length
        self.ref = ref  # the ModelRef it was loaded from (babelforge.eval.families): what a worker loads again
        self._dtype = dtype  # None: dtype_for(device); given only to run another precision (fp16 on a CPU test)
        self.truncated_texts = 0  # texts longer than the text encoder reads, cut to max_text_length

    @property
    def dtype(self):
        return self._dtype if self._dtype is not None else dtype_for(self.device)

    @property
    def precision(self) -> str:
        """`float16` / `float32`: part of the image-embedding cache key."""
        return str(self.dtype).removeprefix("torch.")

    @property
    def image_encoder(self) -> DualEncoder:
        """The model whose name, revision and precision key its image embeddings: itself, or the
        image tower a text-only family's model is paired with."""
        return self

    # ---------------------------------------------------------------- what a family gives

    def _encode_image_batch(self, images: list):
        raise NotImplementedError

    def _encode_text_batch(self, texts: list[str]):
        raise NotImplementedError

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the text encoder's tokens, special tokens included, uncut."""
        raise NotImplementedError

    @property
    def embedding_dim(self) -> int:
        raise NotImplementedError

    # ---------------------------------------------------------------- shared

    def encode_images(self, images: Iterable, batch_size: int = 64) -> np.ndarray:
        """Images are PIL images or paths (opened lazily, one batch at a time, by
        `babelforge.core.images.read_rgb`)."""
        import torch

        batches, batch = [], []

        def flush():
            with torch.inference_mode():
                batches.append(_normalized(self._encode_image_batch(batch)))
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
        return sum(length > self.max_text_length for length in self.token_lengths(list(texts)))

    def set_text_language(self, lang: str | None) -> None:
        """Tell the text encoder which language the next texts are in (a registry key, None when
        unknown): a no-op for most families; a tokenizer with language codes (NLLB-SigLIP) uses it."""

    def encode_texts(self, texts: Sequence[str], batch_size: int = 256, lang: str | None = None) -> np.ndarray:
        """`lang`: the texts' language (a registry key), for the text encoders that take one."""
        import torch

        self.set_text_language(lang)
        truncated = self.count_truncated(texts)
        if truncated:
            # Counted like a bad row, not hidden: a long caption is scored on its first tokens only.
            self.truncated_texts += truncated
            info(
                f"{self.name}: {truncated} of {len(texts)} texts cut to the text encoder's {self.max_text_length} tokens"
            )
        out = []
        for start in range(0, len(texts), batch_size):
            with torch.inference_mode():
                out.append(_normalized(self._encode_text_batch(list(texts[start : start + batch_size]))))
        return np.concatenate(out) if out else np.zeros((0, self.embedding_dim), np.float32)


def _normalized(features) -> np.ndarray:
    array = features if isinstance(features, np.ndarray) else features.float().cpu().numpy()
    array = array.astype(np.float32, copy=False)
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


def missing_folder(ref) -> str | None:
    """Why one part of a parsed spec cannot be loaded, when it names a model folder that is not
    there (None when it is a folder or may be a Hub model or an open_clip name): folder-like, or a
    Hub id without a pinned revision that the Hub cache does not know (it needs its revision anyway)."""
    path = Path(ref.id)
    if path.is_dir():
        return None
    if path.exists():
        return f"not a folder: {ref.id}"
    if folder_like(ref.id):
        return f"no such folder: {ref.id}"
    if not ref.revision and ref.family != "open_clip" and not in_hub_cache(ref.id):
        return (
            f"no such folder: {ref.id} (a Hub model is [FAMILY:]ID@REVISION; "
            "babelforge eval_zeroshot --help lists the model families)"
        )
    return None


def load_model(spec: str, revision: str | None = None, device: str | None = None) -> DualEncoder:
    """The model a spec names (`babelforge.eval.families`: [FAMILY:]ID[@REVISION][+IMAGE_SPEC]),
    loaded by its family on `device`; `revision` pins an id written without `@REVISION` (a params
    entry's `revision:`). A Hub model needs its revision: results must be reproducible."""
    return load_ref(parse_spec(spec, revision), resolve_device(device))


def load_ref(ref, device: str) -> DualEncoder:
    """A parsed `ModelRef` loaded by its family's loader (its image tower, if any, by its own)."""
    for part in (ref, ref.image) if ref.image else (ref,):
        problem = unloadable(part)
        if problem:
            raise BabelforgeError(problem)
    return resolve(family(ref.family).loader)(ref, device)


def unloadable(ref) -> str | None:
    """Why one part of a spec cannot be loaded before any library is asked: a folder that is not
    there, or a Hub id without its revision (None when it may load)."""
    if ref.local:
        return None
    if folder_like(ref.id):
        return (
            f"model {ref.id}: not a model directory; build it (dvc repro eval_tiny_clip) "
            "or fix params.yaml eval.common.models"
        )
    if not ref.revision:
        return (
            f"model {ref.name}: no revision pinned; write the spec as {ref.name}@<commit sha>"
            + (" (open_clip built-in names: @<pretrained tag>)" if ref.family == "open_clip" else "")
            + " or add `revision:` to its params.yaml eval.common.models entry"
        )
    return None


def hub_access(spec: str, revision: str, filename: str = "config.json") -> dict:
    """from_pretrained arguments for a Hub model: the local cache when it has the revision,
    else the Hub; offline (no cache, Hub unreachable) a clear error at once instead of
    minutes of retries."""

    from huggingface_hub import constants, try_to_load_from_cache

    cached = try_to_load_from_cache(spec, filename, revision=revision)
    if isinstance(cached, str):
        return {"revision": revision, "local_files_only": True}
    if hub_reachable():
        return {"revision": revision}
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    raise BabelforgeError(
        f"model {spec}@{revision}: not in the Hugging Face cache and {host} is unreachable (or HF_HUB_OFFLINE is set); "
        "pre-fill the cache (huggingface-cli download) or use a local directory in params.yaml eval.common.models"
    )


def checkpoint_source(ref, filename: str = "config.json") -> tuple[str, str, dict]:
    """(what a library loads, the revision that pins it, its Hub arguments) of one part of a spec: a
    local folder is hashed; a Hub id is read from the cache when it has the revision, else from the
    Hub (one line offline). `filename` is a file the checkpoint has, to look for in the cache."""
    if ref.local:
        return ref.id, "sha256:" + directory_hash(ref.id), {}
    return ref.id, ref.revision, hub_access(ref.id, ref.revision, filename)


def hub_reachable() -> bool:
    """Whether the Hugging Face Hub may be asked: HF_HUB_OFFLINE is not set and its host answers on
    443 within 5 s (offline, a clear error at once instead of the libraries' minutes of retries)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=5).close()
    except OSError:
        return False
    return True


def hub_snapshot(spec: str, revision: str, filename: str, patterns: Sequence[str]) -> Path:
    """A local folder of the Hub repo `spec` at `revision` (the files matching `patterns`), from
    the cache when it has them, else downloaded: what a family whose library takes no revision
    loads from (its folder is the pinned commit)."""
    from huggingface_hub import snapshot_download

    access = hub_access(spec, revision, filename)
    return Path(snapshot_download(spec, allow_patterns=list(patterns), **access))


def text_length_limit(*limits) -> int | None:
    """The shortest of the text encoder's limits that is a real one (tokenizers say 1e30 for none)."""
    real = [int(n) for n in limits if n and n < 1_000_000]
    return min(real) if real else None


def position_limit(model) -> int | None:
    """How many tokens a transformers text model's position table reads: `max_position_embeddings`,
    less the positions a RoBERTa-style model (XLM-R) never uses (its positions start after <pad>)."""
    import torch

    positions = getattr(model.config, "max_position_embeddings", None)
    if not positions:
        return None
    for module in model.modules():
        padding_idx = getattr(module, "padding_idx", None)
        if isinstance(padding_idx, int) and isinstance(
            getattr(module, "position_embeddings", None), torch.nn.Embedding
        ):
            return int(positions) - (padding_idx + 1)
    return int(positions)


def first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
