"""The `mclip_legacy` family: M-CLIP's first text encoders, a transformers BERT plus a linear head kept apart.

The legacy checkpoints (multilingual-clip's `legacy_multilingual_clip.AVAILABLE_MODELS`: M-BERT-Base-ViT-B,
M-BERT-Distil-40, M-BERT-Base-69, Swedish-500k, Swedish-2M) are two parts:

- a Hub repo with a plain transformers BERT and its WordPiece tokenizer (config.json `model_type: bert`), and
- the linear map into the CLIP space, NOT on the Hub: a pickle named `<…> Linear Weights.pkl` that the
  project's weights script downloads; it holds `[weight, bias]`, two numpy arrays of shapes
  (hidden size, CLIP dim) and (CLIP dim,).

A text is embedded as the library does: the tokenizer's batch (padded), the BERT's last hidden state,
its mean over the attention mask, then `pooled @ weight + bias` (here in float32, whatever the BERT
runs in). Texts past the position table are cut and counted, as in every family.

Where the head comes from:

- a local folder in the legacy layout: the Hub repo's files plus the one `*Linear Weights.pkl` file
  (its revision, the sha256 of the folder, covers the head);
- a Hub id at a commit: the repo's files from the Hugging Face cache, the head from that snapshot if
  the repo holds it, else from the folder `$BABELFORGE_MCLIP_HEADS` under the library's name for it
  (M-CLIP/M-BERT-Base-ViT-B: `M-BERT-Base-69-ViT Linear Weights.pkl`); the revision is then
  `<commit>;head=sha256:<digest of the pickle>`.

The pickle is never unpickled as such: `read_head` allows only what rebuilding plain numpy arrays
needs (`HEAD_GLOBALS`) and refuses any other global (os.system, builtins.exec, …) in one line,
before it is called.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import directory_hash, sha256_file
from babelforge.eval.families.paired import PairedEncoder, check_dims
from babelforge.eval.models import (
    dtype_for,
    first_line,
    hub_offline,
    hub_snapshot,
    load_ref,
    position_limit,
    text_length_limit,
)

HEAD_PATTERN = "*Linear Weights.pkl"  # every legacy head's file name ends so (AVAILABLE_MODELS head_name)
HEADS_ENV = "BABELFORGE_MCLIP_HEADS"  # the folder of the heads of Hub ids whose repo lacks them
HUB_FILES = (  # what the BERT and its tokenizer need from the Hub repo (not its TF or Flax weights)
    "config.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "pytorch_model.bin",
    "model.safetensors",
    HEAD_PATTERN,
)
MARKER_FILE = "config.json"  # what every checkpoint of the family has (babelforge.eval.families.marker_file)
FOLDER_HOLDS = f"a transformers config.json beside a `{HEAD_PATTERN}` head"
# Parameters a checkpoint may lack without changing what is computed (the last hidden state is read,
# never the pooler AutoModel adds).
UNUSED_PARAMETERS = (".pooler.",)


def detect(folder: Path) -> bool:
    """A folder in the legacy layout: a transformers config.json beside a `*Linear Weights.pkl` head."""
    return (folder / MARKER_FILE).is_file() and any(folder.glob(HEAD_PATTERN))


# ------------------------------------------------------------------ the head, read safely


def _numpy_function(module: str, name: str):
    """numpy's own `module.name` under the spelling the installed numpy has (numpy 2 moved `numpy.core`
    to `numpy._core`; a pickle written by either names its own)."""
    for candidate in (f"numpy._core.{module}", f"numpy.core.{module}"):
        try:
            return getattr(importlib.import_module(candidate), name)
        except (ImportError, AttributeError):
            continue
    raise BabelforgeError(f"numpy has no {module}.{name}: cannot rebuild a pickled array")


def _latin1(text, encoding="latin1"):
    """`_codecs.encode` as protocols 0-2 use it for an array's bytes (`encode(str, 'latin1')`), nothing else."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):  # what Python's pickler writes
        raise pickle.UnpicklingError(f"_codecs.encode({type(text).__name__}, {encoding!r}) is not an array's bytes")
    return text.encode("latin1")


# The only globals a pickled list of numpy arrays refers to (checked with numpy 1.26 for pickle
# protocols 0-5; numpy 2 writes `numpy._core`): an array is rebuilt by `_reconstruct(ndarray, …)` and
# its state (protocols 0-4) or by `_frombuffer(bytes, dtype, shape, order)` (protocol 5); its dtype by
# `numpy.dtype`; protocols 0-2 write its bytes as a latin-1 str and `_codecs.encode`.
HEAD_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): _numpy_function("multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"): _numpy_function("multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"): _numpy_function("numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"): _numpy_function("numeric", "_frombuffer"),
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("_codecs", "encode"): _latin1,
}


class ArraysOnly(pickle.Unpickler):
    """An unpickler that rebuilds numpy arrays and plain containers and refuses every other global."""

    def find_class(self, module: str, name: str):
        if (module, name) not in HEAD_GLOBALS:
            raise pickle.UnpicklingError(f"it would call {module}.{name}")
        return HEAD_GLOBALS[(module, name)]

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("it refers to objects outside the file (persistent ids)")


def read_head(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(weight, bias) of a legacy M-CLIP head pickle: `[weight (hidden, dim), bias (dim,)]`, float arrays.
    Anything else, a global other than `HEAD_GLOBALS` first of all, is refused in one line naming the file."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        head = ArraysOnly(io.BytesIO(data)).load()
    except OSError as error:
        raise BabelforgeError(f"M-CLIP head {path}: cannot read it ({first_line(error)})") from None
    except Exception as error:  # any malformed or refused pickle: one line, never a traceback
        raise BabelforgeError(
            f"M-CLIP head {path}: refused, not a pickled [weight, bias] of numpy arrays ({first_line(error)}); "
            "only numpy arrays are read from it, nothing in it is run"
        ) from None
    if not (
        isinstance(head, list | tuple)
        and len(head) == 2
        and all(isinstance(part, np.ndarray) and part.dtype.kind == "f" for part in head)
    ):
        kind = f"{type(head).__name__} of {len(head)}" if isinstance(head, list | tuple) else type(head).__name__
        raise BabelforgeError(
            f"M-CLIP head {path}: refused, it holds a {kind}, not [weight, bias] (two float numpy arrays)"
        )
    weight, bias = head
    if weight.ndim != 2 or bias.shape != (weight.shape[1],):
        raise BabelforgeError(
            f"M-CLIP head {path}: weight {weight.shape} and bias {bias.shape} do not make a linear map "
            "(weight (hidden size, dim), bias (dim,))"
        )
    return weight, bias


# ------------------------------------------------------------------ the encoder


class LegacyMClipEncoder(PairedEncoder):
    """A legacy M-CLIP: its BERT, mean pooling and linear head for texts, the paired image tower for images."""

    family = "mclip_legacy"

    def __init__(self, model, tokenizer, weight, bias, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.tokenizer = tokenizer
        self.weight = weight  # (hidden, dim) float32 on the device
        self.bias = bias

    def _encode_text_batch(self, texts: list[str]):
        cut = {"truncation": True, "max_length": self.max_text_length} if self.max_text_length else {}
        batch = self.tokenizer(texts, padding=True, return_tensors="pt", **cut).to(self.device)
        hidden = self.model(**batch)[0].float()
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1)
        return pooled @ self.weight + self.bias

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(texts), truncation=False, verbose=False)["input_ids"]]


def library_head_names() -> dict[str, str]:
    """Hub id -> the file name of its head, as multilingual-clip's legacy module names them."""
    from multilingual_clip.legacy_multilingual_clip import AVAILABLE_MODELS

    return {entry["model_name"]: entry["head_name"] for entry in AVAILABLE_MODELS.values()}


def find_head(ref, folder: Path) -> Path:
    """The head file of a legacy checkpoint in `folder` (a local folder, or a Hub snapshot); for a Hub id
    whose repo lacks it, the library's file name in `$BABELFORGE_MCLIP_HEADS`."""
    heads = sorted(folder.glob(HEAD_PATTERN))
    if len(heads) > 1:
        raise BabelforgeError(
            f"model {ref.name}: {len(heads)} heads ({', '.join(h.name for h in heads)}) in {folder}; keep one"
        )
    if heads:
        return heads[0]
    if ref.local:
        raise BabelforgeError(f"model {ref.name}: no linear head ({HEAD_PATTERN}) in {folder}")
    name = library_head_names().get(ref.id)
    if name is None:
        raise BabelforgeError(
            f"model {ref.name}: its Hub repo has no linear head ({HEAD_PATTERN}) and multilingual-clip's legacy "
            "models do not name one for it; make a local folder of the repo's files and its head"
        )
    where = os.environ.get(HEADS_ENV)
    if where and (Path(where) / name).is_file():
        return Path(where) / name
    raise BabelforgeError(
        f"model {ref.name}: its linear head '{name}' is not on the Hub; put that file in the folder "
        f"${HEADS_ENV} names ({where or 'not set'}) or load a local folder of the repo's files and the head "
        "(multilingual-clip's README, Legacy Usage, downloads it)"
    )


def load(ref, device: str) -> LegacyMClipEncoder:
    """A legacy M-CLIP folder (or Hub id at `ref.revision`, its head beside it) plus the image tower `ref.image`."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    if ref.local:
        folder = Path(ref.id)
        revision = "sha256:" + directory_hash(folder)
        head_path = find_head(ref, folder)
    else:
        folder = hub_snapshot(ref.id, ref.revision, MARKER_FILE, HUB_FILES)
        head_path = find_head(ref, folder)
        revision = f"{ref.revision};head=sha256:{sha256_file(head_path)}"
    weight, bias = read_head(head_path)
    image_model = load_ref(ref.image, device)
    try:
        with hub_offline():  # a pinned folder: nothing is asked of the Hub, whatever HF_HUB_OFFLINE says
            model, info = AutoModel.from_pretrained(folder, output_loading_info=True)
            tokenizer = AutoTokenizer.from_pretrained(folder)
    except (OSError, ValueError) as error:
        raise BabelforgeError(
            f"model {ref.name}@{revision}: transformers cannot load its text model ({first_line(error)})"
        ) from None
    missing = [key for key in info.get("missing_keys", ()) if not any(part in f".{key}" for part in UNUSED_PARAMETERS)]
    if missing:
        raise BabelforgeError(
            f"model {ref.name}@{revision}: the checkpoint lacks {len(missing)} weights of the text encoder "
            f"(e.g. {missing[0]}); they would be random"
        )
    hidden = int(model.config.hidden_size)
    if weight.shape[0] != hidden:
        raise BabelforgeError(
            f"model {ref.name}: its head {head_path.name} maps {weight.shape[0]}-d inputs, its text model gives {hidden}-d"
        )
    model = model.to(device=device, dtype=dtype_for(device)).eval()
    text_dim = int(weight.shape[1])
    check_dims(ref, text_dim, image_model)
    return LegacyMClipEncoder(
        model,
        tokenizer,
        torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float32)).to(device),
        torch.from_numpy(np.ascontiguousarray(bias, dtype=np.float32)).to(device),
        image_model=image_model,
        text_dim=text_dim,
        name=ref.name,
        revision=f"{revision}+{image_model.revision}",
        device=device,
        max_text_length=text_length_limit(position_limit(model), getattr(tokenizer, "model_max_length", None)),
        ref=ref,
    )
