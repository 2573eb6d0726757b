"""Retrieval rows: a loaded model, a caption set's images and its captions per language in; one
row of recall@k both ways per language out.

Plain data in, rows out (the stage reads the files): the model is any object with `name`, `revision`,
`encode_images`, `encode_texts` and `truncated_texts` (its running count of texts cut to the text
encoder's length), so a test can pass a fake one and count its calls. Every row starts with
`babelforge.eval.documents.ROW_KEYS`; `texts_truncated` counts the row's captions the encoder cut.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from babelforge.eval.documents import base_row
from babelforge.eval.retrieval.metric import DEFAULT_KS, retrieval_metrics


def caption_pairs(captions: Sequence[Sequence[str]], max_images: int | None = None) -> tuple[list[str], list[int]]:
    """XTD-style per-image caption lists -> (flat captions, image index per caption)."""
    texts, owner = [], []
    for index, image_captions in enumerate(captions[:max_images] if max_images else captions):
        for caption in image_captions:
            if caption and str(caption).strip():
                texts.append(str(caption))
                owner.append(index)
    return texts, owner


def retrieval_rows(
    model,
    image_set,
    cache,
    captions_by_lang: Mapping[str, Sequence[Sequence[str]]],
    dataset: str,
    resolve_lang,
    seed: int = 0,
    dataset_version: str = "",
    chunk: int = 1024,
    ks: Sequence[int] = DEFAULT_KS,
) -> list[dict]:
    """Recall@k both ways per language of one caption set; `resolve_lang(code)` -> registry key."""
    image_emb = cache.embeddings(model, image_set)
    rows = []
    for code in sorted(captions_by_lang):
        texts, owner = caption_pairs(captions_by_lang[code], len(image_set.files))
        cut_before = model.truncated_texts
        metrics = retrieval_metrics(model.encode_texts(texts, lang=resolve_lang(code)), image_emb, owner, ks, chunk)
        rows.append(
            {
                **base_row(model, dataset, dataset_version, resolve_lang(code), "captions", seed),
                "n_captions": len(texts),
                "n_images": len(image_set.files),
                **metrics,
                "texts_truncated": model.truncated_texts - cut_before,
            }
        )
    return rows
