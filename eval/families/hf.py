"""The `hf` family: transformers dual encoders (CLIP, SigLIP and mSigLIP, AltCLIP, VisionTextDualEncoder).

One class loads them all through `AutoModel`: `get_image_features` / `get_text_features`, the
checkpoint's own tokenizer and its PIL image processor.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families import config_type
from babelforge.eval.models import (
    DualEncoder,
    checkpoint_source,
    dtype_for,
    first_line,
    load_pinned,
    output_dims,
    position_limit,
    text_length_limit,
)

SUPPORTED_TYPES = ("clip", "siglip", "altclip", "vision-text-dual-encoder")
MARKER_FILE = "config.json"  # what every checkpoint of the family has (babelforge.eval.families.marker_file)
FOLDER_HOLDS = f"a config.json of a transformers dual encoder ({', '.join(SUPPORTED_TYPES)})"


def detect(folder: Path) -> bool:
    """A transformers dual encoder's folder: a config.json of a supported model type, or of none (the
    library then says what it lacks); another model type (M-CLIP, the legacy M-CLIP's BERT) is not one."""
    model_type = config_type(folder)
    return (folder / MARKER_FILE).is_file() and (model_type is None or model_type in SUPPORTED_TYPES)


class TransformersEncoder(DualEncoder):
    """A transformers dual encoder: `model`, `tokenizer`, `image_processor` as the checkpoint has them."""

    family = "hf"

    def __init__(self, model, tokenizer, image_processor, text_padding: str | bool = True, **kwargs):
        super().__init__(**kwargs)
        self.model = model
        self.tokenizer = tokenizer
        self.image_processor = image_processor
        self.text_padding = text_padding

    @property
    def dtype(self):
        return next(self.model.parameters()).dtype

    def _encode_image_batch(self, images: list):
        pixels = self.image_processor(images=images, return_tensors="pt")["pixel_values"]
        return self.model.get_image_features(pixel_values=pixels.to(self.device, self.dtype))

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenizer(list(texts), truncation=False)["input_ids"]]

    def _encode_text_batch(self, texts: list[str]):
        tokens = self.tokenizer(
            texts,
            padding=self.text_padding,
            truncation=True,
            max_length=self.max_text_length,
            return_tensors="pt",
        )
        inputs = {"input_ids": tokens["input_ids"].to(self.device)}
        if "attention_mask" in tokens and self.text_padding != "max_length":
            inputs["attention_mask"] = tokens["attention_mask"].to(self.device)
        return self.model.get_text_features(**inputs)

    @property
    def embedding_dim(self) -> int:
        # Measured, not read from the config: where the vectors come out differs by architecture
        # (CLIP's projection_dim, SigLIP's text projection_size and vision hidden_size).
        return output_dims(self)[0]


def stated_dims(folder: Path) -> tuple[int, int] | None:
    """(text, image): the vector sizes a local checkpoint's config.json states, read as JSON so that a
    mismatch is refused before torch and transformers are imported (seconds of a one-line error). SigLIP's
    text head projects to `projection_size` (its hidden size when unset) and its image tower gives its
    vision hidden size; the others project both towers to one `projection_dim`. None when not stated."""
    try:
        config = json.loads((folder / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict):
        return None
    if config.get("model_type") == "siglip":
        text, vision = config.get("text_config") or {}, config.get("vision_config") or {}
        sizes = (text.get("projection_size") or text.get("hidden_size"), vision.get("hidden_size"))
    else:
        sizes = (config.get("projection_dim"),) * 2
    return sizes if all(isinstance(size, int) for size in sizes) else None


def load(ref, device: str) -> TransformersEncoder:
    """A local directory, or a Hub id at `ref.revision`."""
    from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoTokenizer

    def from_folder(folder: str):
        config = AutoConfig.from_pretrained(folder)
        if config.model_type not in SUPPORTED_TYPES:
            raise BabelforgeError(
                f"model {ref.id}: transformers type {config.model_type!r} is not a dual encoder this family loads "
                f"({', '.join(SUPPORTED_TYPES)}); another family's checkpoint? name it as FAMILY:ID "
                "(babelforge eval_zeroshot --help lists the families)"
            )
        model = AutoModel.from_pretrained(folder, dtype=dtype_for(device)).to(device).eval()
        # The fast processors need torchvision; the PIL ones give the reference preprocessing.
        image_processor = AutoImageProcessor.from_pretrained(folder, use_fast=False)
        return config, model, AutoTokenizer.from_pretrained(folder), image_processor

    # A folder: the local one, or the cache's snapshot of the pinned commit (every file read at it).
    source, revision = checkpoint_source(ref)
    try:
        config, model, tokenizer, image_processor = load_pinned(ref, source, from_folder)
    except (OSError, ValueError) as error:
        raise BabelforgeError(
            f"model {ref.id}@{revision}: cannot load it from {source} ({first_line(error)}); "
            "offline, use a local directory or pre-fill the Hugging Face cache"
        ) from None
    # SigLIP was trained on texts padded to a fixed 64 tokens without an attention mask.
    siglip = config.model_type == "siglip"
    # Truncate to what both the position table and the tokenizer allow.
    max_length = text_length_limit(position_limit(model.text_model), getattr(tokenizer, "model_max_length", None))
    return TransformersEncoder(
        model,
        tokenizer,
        image_processor,
        text_padding="max_length" if siglip else True,
        name=ref.name,
        revision=revision,
        device=device,
        max_text_length=max_length,
        ref=ref,
    )
