"""MVL-SIB rows: a loaded model, the task tables per (config, language) and their images in; one
row per task, k and language out.

Plain data in, rows out (the stage reads the files): the model is any object with `name`, `revision`,
`encode_images`, `encode_texts` and `truncated_texts` (its running count of texts cut to the text
encoder's length), so a test can pass a fake one and count its calls. Every row starts with
`babelforge.eval.documents.ROW_KEYS`; `texts_truncated` counts the language's texts the encoder cut
(its tasks share them, so every row of a language carries the language's count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from babelforge.eval.documents import base_row
from babelforge.eval.mvl_sib.metric import evaluate_table, parse_config


def mvl_sib_rows(
    model, tables: Mapping[tuple[str, str], object], image_set, cache, seed: int = 0, dataset_version: str = ""
) -> list[dict]:
    """`tables[(config, lang)]` = a task table; one row per task, k and language, in (config, lang) order.

    `tables` may read each table when it is looked up (the stage passes one that does): the languages
    are done one after another and a language's tables and text vectors are let go when it is done, so
    the memory held is one language's, not every language's (205 languages at full size)."""
    image_emb = cache.embeddings(model, image_set)
    by_id = {name.rsplit(".", 1)[0]: image_emb[i] for i, name in enumerate(image_set.files)}
    configs_by_lang: dict[str, list[str]] = {}
    for config, lang in sorted(tables):
        configs_by_lang.setdefault(lang, []).append(config)
    rows_by_key = {}
    for lang in sorted(configs_by_lang):
        encode_once, texts_cut = language_encoder(model, lang)
        language_rows = []
        for config in configs_by_lang[lang]:
            task, k = parse_config(config)
            result = evaluate_table(tables[(config, lang)], task, encode_once, by_id)
            row = {
                **base_row(model, "mvl_sib", dataset_version, lang, "none", seed),
                "mvl_task": task,
                "k": k,
                "accuracy": result["accuracy"],
                "n": result["n"],
            }
            rows_by_key[(config, lang)] = row
            language_rows.append(row)
        for row in language_rows:  # known once every task of the language has encoded its texts
            row["texts_truncated"] = texts_cut()
    return [rows_by_key[key] for key in sorted(rows_by_key)]


def language_encoder(model, lang: str):
    """An encoder of one language's texts that encodes each text once (the task configs of a language
    share its 1,004 sentences), and the count of the language's texts the encoder cut so far."""
    memo: dict[str, np.ndarray] = {}
    cut = 0

    def encode_once(texts: Sequence[str]) -> np.ndarray:
        nonlocal cut
        new = [t for t in dict.fromkeys(texts) if t not in memo]
        if new:
            before = model.truncated_texts
            memo.update(zip(new, model.encode_texts(new, lang=lang)))
            cut += model.truncated_texts - before
        return np.stack([memo[t] for t in texts])

    return encode_once, lambda: cut
