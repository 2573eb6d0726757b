"""The half both text-only families (`mclip`, `st`) share: a text encoder of theirs paired with the
image tower of another model (the spec's `+IMAGE_SPEC`, loaded by its own family)."""

from __future__ import annotations

from babelforge.core.errors import BabelforgeError
from babelforge.eval.models import DualEncoder


class PairedEncoder(DualEncoder):
    """A text encoder of a text-only family paired with the image tower of another model.

    Images go to `image_model` (a loaded `DualEncoder` of any family) with its own preprocessing;
    a subclass encodes texts. The embedding dims of both agree (`check_dims`). `dtype` is the
    image tower's: the precision that keys the image-embedding cache is the one images ran in.
    """

    def __init__(self, image_model: DualEncoder, text_dim: int, **kwargs):
        super().__init__(**kwargs)
        self.image_model = image_model
        self._embedding_dim = text_dim

    @property
    def dtype(self):
        return self.image_model.dtype

    @property
    def image_encoder(self) -> DualEncoder:
        return self.image_model

    @property
    def embedding_dim(self) -> int:
        return self._embedding_dim

    def _encode_image_batch(self, images: list):
        return self.image_model._encode_image_batch(images)


def check_dims(ref, text_dim: int, image_model: DualEncoder) -> None:
    """One line when the text encoder and the image tower embed into spaces of different sizes."""
    if int(text_dim) != int(image_model.embedding_dim):
        raise BabelforgeError(
            f"model {ref.name}: its text encoder gives {text_dim}-d embeddings, its image tower "
            f"{ref.image.name} gives {image_model.embedding_dim}-d; pair it with the image tower it was "
            "distilled against (+IMAGE_SPEC)"
        )
