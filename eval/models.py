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

import contextlib
import fnmatch
import glob
import socket
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlparse

import numpy as np
from PIL import Image

from babelforge.core.declarations import imported
from babelforge.core.device import resolve_device
from babelforge.core.errors import BabelforgeError
from babelforge.core.images import read_rgb
from babelforge.core.io import directory_hash
from babelforge.core.progress import info
from babelforge.core.weights import check_weights
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
        self._output_dims: tuple[int, int] | None = None  # (text, image) vector sizes, measured (`output_dims`)

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
    if not ref.revision:
        return no_revision_line(ref)
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
        check_local_weights(part)
    check_stated_dims(ref)
    try:
        model = imported(family(ref.family).loader)(ref, device)
    except Exception as error:
        # What the check above cannot see (a header naming an unknown dtype...): safetensors' own
        # error names no file, so the model is named.
        if type(error).__name__ != "SafetensorError":
            raise
        raise BabelforgeError(
            f"model {ref.name}: a weights file cannot be read ({first_line(error)}); copy or fetch the model again"
        ) from None
    check_output_dims(model, ref)
    return model


# What `output_dims` encodes: a text every tokenizer reads and a blank image every preprocessing resizes.
PROBE_TEXT = "a photo"
PROBE_IMAGE_SIZE = (64, 64)


def output_dims(model: DualEncoder) -> tuple[int, int]:
    """(text, image): the sizes of the vectors a loaded model really gives, whatever its config states
    (SigLIP's text tower projects to `projection_size`, not its hidden size): one short text and one
    blank image encoded, once per model."""
    if model._output_dims is None:
        import torch

        with torch.inference_mode():
            text = model._encode_text_batch([PROBE_TEXT])
            image = model._encode_image_batch([Image.new("RGB", PROBE_IMAGE_SIZE, "white")])
        model._output_dims = (int(text.shape[-1]), int(image.shape[-1]))
    return model._output_dims


def check_output_dims(model: DualEncoder, ref) -> None:
    """One line at load when a model's text and image vectors differ in size (`output_dims`): they
    could not be compared, and the scores would fail deep in a metric's matrix product instead."""
    text, image = output_dims(model)
    if text != image:
        raise BabelforgeError(towers_differ_line(ref.name, text, image))


def check_stated_dims(ref) -> None:
    """`check_output_dims` before any library is imported, where a local folder's config states both
    sizes (its family's `stated_dims`): a mismatch it states is refused in under a second, not
    after the seconds torch and transformers take to import. What it cannot read is measured at load."""
    reader = family(ref.family).stated_dims
    if ref.image or not ref.local or reader is None:
        return
    sizes = imported(reader)(Path(ref.id))
    if sizes and sizes[0] != sizes[1]:
        raise BabelforgeError(towers_differ_line(ref.name, *sizes))


def towers_differ_line(name: str, text: int, image: int) -> str:
    return (
        f"model {name}: its text tower gives {text}-d vectors and its image tower {image}-d; a text and "
        "an image are compared in one embedding space, so both towers must give vectors of one size "
        "(a checkpoint whose towers were trained together)"
    )


def check_local_weights(ref) -> None:
    """One line when a local folder's weights file is empty, cut short or not what its name says
    (`babelforge.core.weights`): before a library is asked, which would say it in a traceback."""
    if ref.local:
        check_weights(ref.id, f"the model folder {ref.id} is damaged: copy or build it again")


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
        return no_revision_line(ref)
    return None


def no_revision_line(ref) -> str:
    """One line, the same for every family: a Hub model (one part of a spec) named without the revision
    that pins what is loaded, and how to pin it."""
    spec = f"{ref.family}:{ref.id}"
    if ref.family == "open_clip" and not ref.id.startswith("hf-hub:"):  # a built-in name: pinned by its tag
        return f"model {spec}: no revision pinned; give {spec}@<pretrained tag> (open_clip.list_pretrained())"
    return (
        f"model {spec}: no folder {ref.id} here, and as a Hub model no revision pinned; give {spec}@<commit sha> "
        "(`babelforge pins --update` looks up the commit of a model listed in params.yaml eval.common.models)"
    )


# ------------------------------------------------------------------ Hub models, read at their pinned commit
#
# A library given a Hub id and a revision reads some files at `main` anyway (transformers' AutoProcessor,
# under sentence-transformers, asks for processor_config.json and others there) and, the Hub unreachable,
# retries each file for minutes. So a pinned model is loaded from a folder: the cache's snapshot of its
# commit, fetched first when it is not cached (`pinned_folder`); the models a library loads by their id
# alone inside it (M-CLIP's modelBase, an OpenCLIP text tower: `hub_dependency`) are in the cache or
# fetched first too; and the load itself runs without the network (`hub_offline`). Fetching asks the Hub
# for the repo's file list once (no retries) before anything else: an error there is one line at once.

# A Hub model's weights as transformers finds them in a folder (one of these, or its index).
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
# What a fetch of a whole repo leaves out: other frameworks' weights and exports, never read here.
NOT_FETCHED = (
    "*.h5", "*.msgpack", "*.onnx", "*.onnx_data", "*.ot", "*.tflite", "*.gguf", "*.mlmodel",
    "onnx/*", "openvino/*", "coreml/*", "tf_model*", "flax_model*", "rust_model*",
)  # fmt: skip
PICKLED = (".bin", ".pt", ".pth", ".ckpt")  # left out beside safetensors weights in the same folder
Loaded = TypeVar("Loaded")  # what a family's loader gives `load_pinned`


def hub_host() -> str:
    from huggingface_hub import constants

    return urlparse(constants.ENDPOINT).hostname or "huggingface.co"


def not_cached_line(subject: str) -> str:
    """One line: `subject` (a model at a revision) is not in the cache and the Hub cannot be asked."""
    return (
        f"{subject}: not in the Hugging Face cache and {hub_host()} is unreachable (or HF_HUB_OFFLINE is set); "
        "pre-fill the cache (huggingface-cli download) or use a local directory in params.yaml eval.common.models"
    )


def cached_snapshot(repo: str, revision: str | None, filename: str) -> Path | None:
    """The Hugging Face cache's folder of the Hub model `repo` at `revision` (a commit sha, or a branch
    or tag its refs name; None: `main`) when it holds `filename`; None otherwise. Asks no network."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo, filename, revision=revision)
    if not isinstance(cached, str):
        return None
    return Path(cached).parents[len(Path(filename).parts) - 1]


def fetch(repo: str, revision: str, patterns: Sequence[str] | None = None) -> Path:
    """The files of the Hub model `repo` at `revision` fetched into the Hugging Face cache; its snapshot
    folder. The files matching `patterns`; None: all but other frameworks' (`NOT_FETCHED`) and pickled
    weights beside safetensors ones (the libraries read the safetensors). The Hub is asked for the
    file list once first (no retries); a BabelforgeError saying why ("<host> cannot list it (...)") when
    it answers with an error."""
    from huggingface_hub import HfApi, snapshot_download

    try:
        names = [sibling.rfilename for sibling in HfApi().model_info(repo, revision=revision).siblings or []]
    except Exception as error:  # huggingface_hub raises many kinds (HTTP errors, connection errors)
        raise BabelforgeError(f"{hub_host()} cannot list it ({first_line(error)})") from None
    if patterns is not None:
        wanted = [name for name in names if any(fnmatch.fnmatch(name, pattern) for pattern in patterns)]
    else:
        wanted = [name for name in names if not any(fnmatch.fnmatch(name, pattern) for pattern in NOT_FETCHED)]
        safetensors = {Path(name).parent for name in wanted if name.endswith(".safetensors")}
        wanted = [name for name in wanted if not (name.endswith(PICKLED) and Path(name).parent in safetensors)]
    try:
        return Path(snapshot_download(repo, revision=revision, allow_patterns=[glob.escape(name) for name in wanted]))
    except Exception as error:
        raise BabelforgeError(f"{hub_host()} did not give its files ({first_line(error)})") from None


def pinned_folder(repo: str, revision: str, filename: str) -> Path:
    """The folder the Hub model `repo` pinned at `revision` loads from, every file of it at that commit:
    the cache's snapshot of the commit when it holds `filename` (no network at all); else, when the Hub
    can be asked, the commit fetched into the cache first; else one line at once."""
    folder = cached_snapshot(repo, revision, filename)
    if folder is not None:
        return folder
    if not hub_reachable():
        raise BabelforgeError(not_cached_line(f"model {repo}@{revision}"))
    try:
        return fetch(repo, revision)
    except BabelforgeError as error:
        raise BabelforgeError(f"model {repo}@{revision}: not in the Hugging Face cache and {error}") from None


def checkpoint_source(ref, filename: str = "config.json") -> tuple[str, str]:
    """(the folder a library loads, the revision that pins it) of one part of a spec: a local folder,
    hashed; a Hub id, the folder of its pinned commit (`pinned_folder`; `filename` is a file the
    checkpoint has, to look for in the cache), its weights files checked (`babelforge.core.weights`:
    `load_ref` checks a local folder's). Load it inside `hub_offline()`, or with `load_pinned`."""
    if ref.local:
        return ref.id, "sha256:" + directory_hash(ref.id)
    folder = pinned_folder(ref.id, ref.revision, filename)
    check_weights(folder, cached_remedy(ref.id, ref.revision))
    return str(folder), ref.revision


def cached_remedy(repo: str, revision: str) -> str:
    """What to do about a damaged file of a Hub model's snapshot in the Hugging Face cache."""
    return (
        f"it is in the Hugging Face cache: delete that snapshot (huggingface-cli delete-cache) and fetch it "
        f"again (huggingface-cli download {repo} --revision {revision})"
    )


def load_pinned(ref, source: str, load: Callable[[str], Loaded]) -> Loaded:
    """`load(source)` without the network: `source` is one part of a spec's folder (`checkpoint_source`).
    A cached snapshot that lacks a file the library reads (a cache filled file by file) is completed
    from the Hub when it can be asked, and loaded again; otherwise the library's error (OSError,
    ValueError: it names the file) goes up, for the family to say in one line."""
    try:
        with hub_offline():
            return load(source)
    except (OSError, ValueError) as error:
        if ref.local or not hub_reachable():
            raise
        lacking = first_line(error)
    try:
        fetch(ref.id, ref.revision)
    except BabelforgeError as error:
        raise BabelforgeError(
            f"model {ref.id}@{ref.revision}: its snapshot in the Hugging Face cache lacks a file ({lacking}) and {error}"
        ) from None
    with hub_offline():
        return load(source)


def hub_dependency(
    repo: str,
    needs: Sequence[Sequence[str]],
    what: str,
    role: str,
    patterns: Sequence[str] | None = None,
    network: bool = True,
) -> Path:
    """A Hub model a library loads by its id alone (at `main`) inside another model: M-CLIP's text model
    (config.json modelBase), an OpenCLIP text tower. Its folder in the cache (at `main` as the cache's
    refs name it: what the library reads without the network) when it holds one file of each group of
    `needs`; else, when the Hub can be asked, its files at `main` (those matching `patterns`; None: all
    a library reads) fetched first; else one line naming the repo and the file, as `what` (`model X:
    its text model`) and its `role` (where the id is written) name it. Not `network` (the dependency of
    a local folder, which loads as it is here): the Hub is never asked, one line at once."""
    folder = cached_snapshot(repo, None, needs[0][0])
    missing = next(
        (group[0] for group in needs if folder is None or not any((folder / name).is_file() for name in group)), None
    )
    if missing is None:
        return folder
    subject = f"{what} {repo} ({role}): its {missing} is not in the Hugging Face cache"
    if not network:
        raise BabelforgeError(
            f"{subject}, and a local folder loads without the network; pre-fill the cache "
            f"(huggingface-cli download {repo}) or name a local folder there"
        )
    if not hub_reachable():
        raise BabelforgeError(
            f"{subject} and {hub_host()} is unreachable (or HF_HUB_OFFLINE is set); pre-fill the cache "
            f"(huggingface-cli download {repo}) or name a local folder there"
        )
    try:
        return fetch(repo, "main", patterns)
    except BabelforgeError as error:
        raise BabelforgeError(f"{subject} and {error}") from None


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """The Hugging Face libraries without the network for the duration of a load: huggingface_hub's
    sessions answer every request with OfflineModeIsEnabled at once (no retries: a cached file is used,
    a missing one is an error) and transformers reads its cache only (`local_files_only`), whether or
    not HF_HUB_OFFLINE is set. What a load from pinned folders and cached repos needs. Everything is
    restored on the way out, whatever happened (a process-wide switch: one load at a time)."""
    from huggingface_hub import constants
    from huggingface_hub.utils import reset_sessions

    before = constants.HF_HUB_OFFLINE
    transformers_hub = sys.modules.get("transformers.utils.hub")
    transformers_before = getattr(transformers_hub, "_is_offline_mode", before)
    constants.HF_HUB_OFFLINE = True
    if transformers_hub is not None:
        transformers_hub._is_offline_mode = True
    reset_sessions()  # the next sessions read HF_HUB_OFFLINE: a request fails at once
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = before
        transformers_hub = sys.modules.get("transformers.utils.hub")  # perhaps imported during the load
        if transformers_hub is not None:
            transformers_hub._is_offline_mode = transformers_before
        reset_sessions()


def hub_reachable() -> bool:
    """Whether the Hugging Face Hub may be asked: HF_HUB_OFFLINE is not set and its endpoint's host
    answers on its port within 5 s (offline, a clear error at once instead of the libraries' minutes
    of retries)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    endpoint = urlparse(constants.ENDPOINT)
    try:
        port = endpoint.port or (80 if endpoint.scheme == "http" else 443)
        socket.create_connection((endpoint.hostname or "huggingface.co", port), timeout=5).close()
    except (OSError, ValueError):
        return False
    return True


def hub_snapshot(spec: str, revision: str, filename: str, patterns: Sequence[str]) -> Path:
    """A local folder of the Hub repo `spec` at `revision` with the files matching `patterns`: the
    cache's snapshot of the commit when it holds `filename` and a file matching `patterns` (no
    network), else fetched first: what a family whose library takes no revision loads from (its
    folder is the pinned commit). Offline, one line; a damaged weights file there, one line too."""
    folder = cached_snapshot(spec, revision, filename)
    if folder is None or not any(any(folder.glob(pattern)) for pattern in patterns):
        subject = f"model {spec}@{revision}" + (f" ({', '.join(patterns)})" if folder is not None else "")
        if not hub_reachable():
            raise BabelforgeError(not_cached_line(subject))
        try:
            folder = fetch(spec, revision, patterns)
        except BabelforgeError as error:
            raise BabelforgeError(f"{subject}: not in the Hugging Face cache and {error}") from None
    check_weights(folder, cached_remedy(spec, revision))
    return folder


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
