"""Similarity helpers every task scores with: L2 normalisation (cosine = dot product after it) and
the rank of the best positive, with ties counted against the query (a tie cannot inflate a score)."""

from __future__ import annotations

import numpy as np


def l2_normalize(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norm = np.linalg.norm(x, axis=axis, keepdims=True)
    return x / np.maximum(norm, 1e-12)


def rank_of_best_positive(scores: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Per row: 0-based rank of the highest-scoring positive column (ties pessimistic)."""
    best_positive = np.where(positive, scores, -np.inf).max(axis=1, keepdims=True)
    beaten_or_tied = (scores >= best_positive) & ~positive
    return beaten_or_tied.sum(axis=1)
