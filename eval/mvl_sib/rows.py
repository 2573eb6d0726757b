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
    """`tables[(config, lang)]` = a task table; one row per task, k and language."""
    image_emb = cache.embeddings(model, image_set)
    by_id = {name.rsplit(".", 1)[0]: image_emb[i] for i, name in enumerate(image_set.files)}
    # The task configs of a language share its 1,004 sentences: encode each text once per language
    # (per language, so the texts the encoder cut are counted for each language that has them).
    memos: dict[str, dict[str, np.ndarray]] = {}
    cut: dict[str, int] = {}

    def encoder_for(lang: str):
        memo = memos.setdefault(lang, {})

        def encode_once(texts: Sequence[str]) -> np.ndarray:
            new = [t for t in dict.fromkeys(texts) if t not in memo]
            if new:
                before = model.truncated_texts
                memo.update(zip(new, model.encode_texts(new, lang=lang)))
                cut[lang] = cut.get(lang, 0) + model.truncated_texts - before
            return np.stack([memo[t] for t in texts])

        return encode_once

    rows = []
    for (config, lang), table in sorted(tables.items()):
        task, k = parse_config(config)
        result = evaluate_table(table, task, encoder_for(lang), by_id)
        rows.append(
            {
                **base_row(model, "mvl_sib", dataset_version, lang, "none", seed),
                "mvl_task": task,
                "k": k,
                "accuracy": result["accuracy"],
                "n": result["n"],
            }
        )
    for row in rows:  # known once every task of the language has encoded its texts
        row["texts_truncated"] = cut.get(row["lang"], 0)
    return rows
