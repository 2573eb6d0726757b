"""Fixtures for the eval tests: a fake dual encoder that counts its calls, a tiny
real CLIP built once per session, and small image sets drawn with PIL."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO / ".." / "shared" / "data"


class CountingEncoder:
    """Texts embed as the one-hot of the first integer they contain (plus a template
    offset); images embed by their file name's leading integer. Counts every call."""

    def __init__(self, dim: int = 16, name: str = "fake", revision: str = "r1"):
        self.dim, self.name, self.revision = dim, name, revision
        self.image_calls = 0
        self.text_calls = 0

    def _onehot(self, index: int) -> np.ndarray:
        vector = np.zeros(self.dim, np.float32)
        vector[index % self.dim] = 1.0
        return vector

    def encode_texts(self, texts, batch_size: int = 256):
        self.text_calls += 1
        out = []
        for text in texts:
            numbers = [int(n) for n in re.findall(r"\d+", text)]
            vector = self._onehot(numbers[0]) if numbers else np.ones(self.dim, np.float32)
            out.append(vector / np.linalg.norm(vector))
        return np.stack(out) if out else np.zeros((0, self.dim), np.float32)

    def encode_images(self, images, batch_size: int = 64):
        self.image_calls += 1
        return np.stack([self._onehot(int(re.match(r"\d+", Path(p).name).group())) for p in images])


@pytest.fixture
def counting_encoder():
    return CountingEncoder()


@pytest.fixture
def digit_images(tmp_path):
    """An ImageSet of 6 files named by class (0..5), one per class."""
    from eval.images import ImageSet

    root = tmp_path / "imgs"
    root.mkdir()
    files = []
    for c in range(6):
        (root / f"{c}.png").write_bytes(f"image {c}".encode())
        files.append(f"{c}.png")
    return ImageSet(root, tuple(files), tuple(range(6)))


@pytest.fixture(scope="session")
def tiny_clip_dir(tmp_path_factory):
    from eval.models import build_tiny_clip

    return build_tiny_clip(tmp_path_factory.mktemp("models") / "tiny_clip", seed=0)
