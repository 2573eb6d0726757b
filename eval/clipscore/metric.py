"""CLIPScore, RefCLIPScore and VALSE-style pairwise accuracy (Hessel et al., 2021).

CLIP-S(c, v) = w * max(cos(c, v), 0) with w = 2.5.
RefCLIP-S(c, R, v) = harmonic mean of CLIP-S(c, v) and max(max_r cos(c, r), 0).
Inputs are embeddings; they are L2-normalised here, so cosine = dot product.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from babelforge.eval.similarity import l2_normalize

CLIPSCORE_W = 2.5


def clip_score(image_emb: np.ndarray, text_emb: np.ndarray, w: float = CLIPSCORE_W) -> np.ndarray:
    """Row-wise CLIP-S of caption i for image i."""
    cos = np.sum(l2_normalize(image_emb) * l2_normalize(text_emb), axis=-1)
    return w * np.maximum(cos, 0.0)


def ref_clip_score(
    image_emb: np.ndarray,
    text_emb: np.ndarray,
    reference_emb: Sequence[np.ndarray],
    w: float = CLIPSCORE_W,
) -> np.ndarray:
    """Row-wise RefCLIP-S; reference_emb[i] is an (n_refs_i, d) array for caption i.

    A caption without references gets NaN (there is nothing to compare it with).
    """
    clip_s = clip_score(image_emb, text_emb, w)
    text = l2_normalize(text_emb)
    best_ref = np.array(
        [
            max(float((l2_normalize(refs) @ text[i]).max()), 0.0) if len(refs) else np.nan
            for i, refs in enumerate(reference_emb)
        ]
    )
    total = clip_s + best_ref
    return np.where(
        total > 0, 2.0 * clip_s * best_ref / np.where(total > 0, total, 1.0), np.where(np.isnan(best_ref), np.nan, 0.0)
    )


def encode_reference_sets(
    encode_texts: Callable[[Sequence[str]], np.ndarray], reference_sets: Sequence[Sequence[str]]
) -> list[np.ndarray]:
    """One (n_refs_i, d) array per caption, from a single `encode_texts` call over all references."""
    flat = [ref for refs in reference_sets for ref in refs]
    emb = encode_texts(flat)
    bounds = np.cumsum([0, *(len(refs) for refs in reference_sets)])
    return [emb[start:end] for start, end in zip(bounds[:-1], bounds[1:])]


def pairwise_accuracy(caption_scores: Sequence[float], foil_scores: Sequence[float]) -> float:
    """Share of pairs where the caption scores strictly higher than its foil (ties lose)."""
    caption_scores = np.asarray(caption_scores, dtype=float)
    foil_scores = np.asarray(foil_scores, dtype=float)
    if caption_scores.shape != foil_scores.shape:
        raise ValueError("one foil score per caption score is needed")
    return float((caption_scores > foil_scores).mean()) if len(caption_scores) else float("nan")
