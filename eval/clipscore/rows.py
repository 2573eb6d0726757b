"""CLIPScore rows: a loaded model, a caption set's images and its captions per language in; one
row of CLIP-S, RefCLIP-S and pairwise accuracy per language out.

Plain data in, rows out (the stage reads the files): the model is any object with `name`, `revision`,
`encode_images`, `encode_texts` and `truncated_texts` (its running count of texts cut to the text
encoder's length), so a test can pass a fake one and count its calls. Every row starts with
`babelforge.eval.documents.ROW_KEYS`; `texts_truncated` counts the row's captions the encoder cut,
`ref_texts_truncated` (rows with a RefCLIP-S) the reference captions it cut.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from babelforge.core.errors import BabelforgeError
from babelforge.eval.clipscore.metric import clip_score, encode_reference_sets, pairwise_accuracy, ref_clip_score
from babelforge.eval.documents import base_row


def clipscore_rows(
    model,
    image_set,
    cache,
    captions_by_lang: Mapping[str, Sequence[Sequence[str]]],
    dataset: str,
    resolve_lang,
    reference_lang: str | None = "en",
    seed: int = 0,
    dataset_version: str = "",
) -> list[dict]:
    """Per language: mean CLIP-S of each image's first caption, RefCLIP-S against the
    `reference_lang` captions of the same image (cross-lingual reference), and VALSE-style
    pairwise accuracy with the next image's caption as the foil."""
    image_emb = cache.embeddings(model, image_set)
    n = len(image_set.files)
    reference_emb = None
    cut_before = model.truncated_texts
    if reference_lang and reference_lang in captions_by_lang:
        refs = [[str(r) for r in c if r and str(r).strip()] for c in captions_by_lang[reference_lang][:n]]
        reference_emb = encode_reference_sets(
            functools.partial(model.encode_texts, lang=resolve_lang(reference_lang)), refs
        )
    references_cut = model.truncated_texts - cut_before
    rows = []
    for code in sorted(captions_by_lang):
        lacking = sum(1 for c in captions_by_lang[code][:n] if not c)
        if lacking:
            raise BabelforgeError(
                f"eval_clipscore: caption set {dataset}, {code}: {lacking} of {n} images have no caption "
                "(CLIP-S scores each image's first); leave the language out (--language)"
            )
        firsts = [c[0] for c in captions_by_lang[code][:n]]
        cut_before = model.truncated_texts
        text_emb = model.encode_texts(firsts, lang=resolve_lang(code))
        scores = clip_score(image_emb, text_emb)
        foil_scores = clip_score(image_emb, np.roll(text_emb, -1, axis=0))
        row = {
            **base_row(model, dataset, dataset_version, resolve_lang(code), "captions", seed),
            "n_images": n,
            "clipscore": float(scores.mean()),
            "pairwise_accuracy": pairwise_accuracy(scores, foil_scores),
            "texts_truncated": model.truncated_texts - cut_before,
        }
        if reference_emb is not None and code != reference_lang:
            row["ref_clipscore"] = float(np.nanmean(ref_clip_score(image_emb, text_emb, reference_emb)))
            row["ref_texts_truncated"] = references_cut
        rows.append(row)
    return rows
