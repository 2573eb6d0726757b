"""On-disk cache of image embeddings, one file per (model, revision, image set).

Image encoding dominates zero-shot evaluation, and every language classifies the same
images: they are encoded once per model and reused by every language (and by later
runs). The key is the sha256 of model name + revision + image-set content hash, so a
new checkpoint or a changed image never reuses stale vectors; the model's precision
(`float16` on a GPU, `float32` on CPU) is part of it too, so a CPU run never reads
vectors a GPU run computed in half precision, and results do not depend on which
device filled the cache first. On CPU the pinned instruction set (README ## Reproducibility)
joins the precision in the key.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from builders.core.io import atomic_path, read_json, write_json


def cache_key(model_name: str, revision: str, image_set_hash: str, precision: str | None = None) -> str:
    parts = [model_name, revision, image_set_hash] + ([precision] if precision else [])
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class ImageEmbeddingCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self._memory: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def embeddings(self, model, image_set, image_set_hash: str | None = None, batch_size: int = 64) -> np.ndarray:
        """The image set's embeddings under `model`, encoding only on a cache miss."""
        image_set_hash = image_set_hash or image_set.content_hash()
        precision = getattr(model, "precision", None)
        if precision and not str(getattr(model, "device", "cpu")).startswith("cuda"):
            # CPU vectors depend on the kernels' instruction set too (nllb.cpu_isa, pinned by the CLI):
            # vectors of another level, or of an unpinned run, are never read back.
            precision += "@" + os.environ.get("CT2_FORCE_CPU_ISA", "unpinned")
        key = cache_key(model.name, model.revision, image_set_hash, precision)
        if key in self._memory:
            self.hits += 1
            return self._memory[key]
        path = self.root / f"{key}.npy"
        meta_path = self.root / f"{key}.json"
        if path.exists() and meta_path.exists() and read_json(meta_path).get("n_images") == len(image_set.files):
            self.hits += 1
            array = np.load(path)
        else:
            self.misses += 1
            array = np.asarray(model.encode_images(image_set.paths, batch_size=batch_size), dtype=np.float32)
            with atomic_path(path) as tmp, open(tmp, "wb") as handle:
                np.save(handle, array)
            write_json({"model": model.name, "revision": model.revision, "precision": precision,
                        "image_set": image_set_hash,
                        "n_images": len(image_set.files), "dim": int(array.shape[1])}, meta_path)
        self._memory[key] = array
        return array
