"""Text<->image retrieval recall@k on L2-normalised embeddings, in bounded memory.

Captions map to images through `caption_image`: caption i describes image
caption_image[i] (XTD / xFlickrCO / XM3600 all have this shape, with one or several
captions per image). Similarities are computed for `chunk` queries at a time, so the
full caption x image matrix is never held.

Ties count against the query: a gallery item that scores exactly as high as the best
correct one is ranked before it. Random tiny models produce such ties more often than
real ones, and a recall that cannot be inflated by ties is the safer reading.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from babelforge.eval.similarity import rank_of_best_positive

DEFAULT_KS = (1, 5, 10)


def text_to_image_ranks(
    text_emb: np.ndarray, image_emb: np.ndarray, caption_image: Sequence[int], chunk: int = 1024
) -> np.ndarray:
    caption_image = np.asarray(caption_image)
    ranks = []
    image_ids = np.arange(len(image_emb))
    for start in range(0, len(text_emb), chunk):
        scores = text_emb[start : start + chunk] @ image_emb.T
        positive = image_ids[None, :] == caption_image[start : start + chunk, None]
        ranks.append(rank_of_best_positive(scores, positive))
    return np.concatenate(ranks) if ranks else np.zeros(0, dtype=int)


def image_to_text_ranks(
    text_emb: np.ndarray, image_emb: np.ndarray, caption_image: Sequence[int], chunk: int = 1024
) -> np.ndarray:
    """Per image: rank of its best-ranked caption among all captions."""
    caption_image = np.asarray(caption_image)
    ranks = []
    for start in range(0, len(image_emb), chunk):
        scores = image_emb[start : start + chunk] @ text_emb.T
        ids = np.arange(start, min(start + chunk, len(image_emb)))
        positive = caption_image[None, :] == ids[:, None]
        ranks.append(rank_of_best_positive(scores, positive))
    return np.concatenate(ranks) if ranks else np.zeros(0, dtype=int)


def recall_at_k(ranks: np.ndarray, ks: Sequence[int] = DEFAULT_KS) -> dict[int, float]:
    return {k: float((np.asarray(ranks) < k).mean()) if len(ranks) else float("nan") for k in ks}


def retrieval_metrics(
    text_emb: np.ndarray,
    image_emb: np.ndarray,
    caption_image: Sequence[int],
    ks: Sequence[int] = DEFAULT_KS,
    chunk: int = 1024,
) -> dict[str, float]:
    """{"t2i_r@1": ..., "i2t_r@1": ..., ..., "mean_recall": ...} for one caption set.

    Images without any caption are skipped in image->text (they have no right answer).
    """
    caption_image = np.asarray(caption_image)
    t2i = recall_at_k(text_to_image_ranks(text_emb, image_emb, caption_image, chunk), ks)
    i2t_ranks = image_to_text_ranks(text_emb, image_emb, caption_image, chunk)
    has_caption = np.isin(np.arange(len(image_emb)), caption_image)
    i2t = recall_at_k(i2t_ranks[has_caption], ks)
    metrics = {f"t2i_r@{k}": v for k, v in t2i.items()}
    metrics.update({f"i2t_r@{k}": v for k, v in i2t.items()})
    metrics["mean_recall"] = float(np.mean(list(t2i.values()) + list(i2t.values())))
    return metrics
