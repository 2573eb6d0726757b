"""The `st` family: multilingual sentence-transformers CLIP (a text model plus its paired CLIP image model).

A text-only family: texts go through `SentenceTransformer.encode` (its own modules: transformer,
pooling, dense), images through the image tower of the spec's `+IMAGE_SPEC`, loaded by its own
family (`babelforge.eval.families.paired`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.eval.families.paired import PairedEncoder, check_dims
from babelforge.eval.models import (
    checkpoint_source,
    dtype_for,
    first_line,
    load_pinned,
    load_ref,
    position_limit,
    text_length_limit,
)

MARKER_FILE = "modules.json"  # what every checkpoint of the family has (babelforge.eval.families.marker_file)
FOLDER_HOLDS = "a modules.json (saved by sentence-transformers)"


def detect(folder: Path) -> bool:
    """A folder sentence-transformers saved (modules.json)."""
    return (folder / MARKER_FILE).is_file()


class SentenceTransformerEncoder(PairedEncoder):
    """A `SentenceTransformer` text model for texts, the paired image tower for images."""

    family = "st"

    def __init__(self, model, **kwargs):
        super().__init__(**kwargs)
        self.model = model

    def _encode_text_batch(self, texts: list[str]):
        return self.model.encode(
            texts,
            batch_size=len(texts),
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        texts = list(texts)
        if getattr(self.model[0], "do_lower_case", False):
            texts = [text.lower() for text in texts]  # what the Transformer module tokenizes
        return [len(ids) for ids in self.model.tokenizer(texts, truncation=False, verbose=False)["input_ids"]]


def embedding_dimension(model) -> int | None:
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return method()


def load(ref, device: str) -> SentenceTransformerEncoder:
    """A sentence-transformers folder (or Hub id at `ref.revision`) plus the image tower `ref.image`."""
    from sentence_transformers import SentenceTransformer

    # A folder: the local one, or the cache's snapshot of the pinned commit. Given a Hub id and a
    # revision, sentence-transformers (through transformers' AutoProcessor) reads some files at `main`.
    source, revision = checkpoint_source(ref, MARKER_FILE)
    image_model = load_ref(ref.image, device)
    try:
        model = load_pinned(ref, source, lambda folder: SentenceTransformer(folder, device=device))
    except (OSError, ValueError) as error:
        raise BabelforgeError(
            f"model {ref.name}@{revision}: sentence-transformers cannot load it from {source} ({first_line(error)}); "
            "offline, use a local folder or pre-fill the Hugging Face cache"
        ) from None
    model = model.to(dtype=dtype_for(device)).eval()
    text_dim = embedding_dimension(model)
    if text_dim is None:
        raise BabelforgeError(f"model {ref.name}@{revision}: sentence-transformers cannot tell its embedding dim")
    check_dims(ref, text_dim, image_model)
    transformer = getattr(model[0], "auto_model", None)
    limit = text_length_limit(model.max_seq_length, position_limit(transformer) if transformer is not None else None)
    if limit and model.max_seq_length != limit:
        # The model states no limit (its tokenizer's 1e30) or one past its position table: cut where
        # the table ends, as sentence-transformers cuts at max_seq_length, instead of failing.
        model.max_seq_length = limit
    return SentenceTransformerEncoder(
        model,
        image_model=image_model,
        text_dim=int(text_dim),
        name=ref.name,
        revision=f"{revision}+{image_model.revision}",
        device=device,
        max_text_length=limit,
        ref=ref,
    )
