"""Zero-shot rows: a loaded model, the image set and the labels per language in; one row per
language and prompt set out.

Plain data in, rows out (the stage reads the files): the model is any object with `name`, `revision`,
`encode_images`, `encode_texts` and `truncated_texts` (its running count of texts cut to the text
encoder's length), so a test can pass a fake one and count its calls. Every row starts with
`babelforge.eval.documents.ROW_KEYS`; `texts_truncated` counts the row's prompts the encoder cut.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence

from babelforge.core.progress import ShardProgress
from babelforge.eval.documents import base_row
from babelforge.eval.zeroshot.metric import CONTROL_CLASSES, CONTROL_REPEATS, choose_templates, evaluate_language


def zeroshot_rows(
    model,
    image_set,
    cache,
    labels: Mapping[str, Mapping[int, str]],
    english_templates: Sequence[str],
    translated: Mapping[str, Sequence[str]] | None = None,
    prompt_sets: Sequence[str] = ("translated",),
    fallback: str = "english",
    knowledge: Mapping[int, str] | None = None,
    max_templates: int | None = None,
    control_classes: int = CONTROL_CLASSES,
    control_repeats: int = CONTROL_REPEATS,
    seed: int = 0,
    dataset_version: str = "",
    image_set_hash: str | None = None,
) -> list[dict]:
    """One row per language and prompt set; images encoded once per model via `cache`."""
    image_set_hash = image_set_hash or image_set.content_hash()
    rows = []
    # the texts are most of the work at full size (languages x classes x templates): a line every half minute
    texts_progress = ShardProgress(f"text embeddings {model.name}", len(labels), min_interval=30.0, unit="texts")
    for lang in sorted(labels):
        started, texts = time.monotonic(), 0
        for requested in prompt_sets:
            for used, templates in choose_templates(lang, requested, translated or {}, english_templates, fallback):
                templates = templates[:max_templates] if max_templates else templates
                image_emb = cache.embeddings(model, image_set, image_set_hash)  # a hit after the first language
                cut_before = model.truncated_texts
                metrics = evaluate_language(
                    functools.partial(model.encode_texts, lang=lang),
                    image_emb,
                    image_set.targets,
                    labels[lang],
                    templates,
                    knowledge=knowledge,
                    control_seed=seed,
                    control_classes=control_classes,
                    control_repeats=control_repeats,
                )
                texts += len(templates) * len(labels[lang])
                prompt_set = used + ("+knowledge" if knowledge else "")
                rows.append(
                    {
                        **base_row(model, "babel_imagenet", dataset_version, lang, prompt_set, seed),
                        "n_templates": len(templates),
                        **metrics,
                        "texts_truncated": model.truncated_texts - cut_before,
                    }
                )
        texts_progress.shard_done(lang, texts, time.monotonic() - started)
    texts_progress.close()
    return rows
