"""One evaluation run per task: plain tables and a loaded model in, result rows out.

The stage modules (`eval/<task>_stage.py`) read files and params and write reports; here the
built artifacts arrive as DataFrames and the model as any object with `name`,
`revision`, `encode_images` and `encode_texts`, so a test can pass a fake model and
count its calls. Every row carries the model id and revision, the dataset and its
version, the language, the prompt set and the seed (see `babelforge.eval.report.ROW_KEYS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from babelforge.eval import mvl_sib, retrieval, zeroshot
from babelforge.eval.clipscore import clip_score, encode_reference_sets, pairwise_accuracy, ref_clip_score

# prompts.parquet's name for the machine-translated templates.
TRANSLATED_PROMPT_SET = "nllb"


def labels_by_language(labels, drop_duplicates: bool = False) -> dict[str, dict[int, str]]:
    """labels.parquet -> {lang: {class_idx: label}}, the best-ranked label per class."""
    table = labels
    if drop_duplicates and "is_duplicate" in table.columns:
        table = table[~table["is_duplicate"].astype(bool)]
    if "rank" in table.columns:
        table = table.sort_values(["lang", "class_idx", "rank"], kind="stable")
    table = table.drop_duplicates(["lang", "class_idx"], keep="first")
    out: dict[str, dict[int, str]] = {}
    for lang, class_idx, label in zip(table["lang"], table["class_idx"], table["label"]):
        out.setdefault(str(lang), {})[int(class_idx)] = str(label)
    return out


def translated_templates(prompts) -> dict[str, list[str]]:
    """prompts.parquet -> {lang: translated templates to use, in template order}; None -> {}.

    The prompts stage flags rows: `use` (else `valid`) marks usable ones, and
    `prompt_set` separates the NLLB translations from the fallback sets (`english`,
    `label_only`) it adds for languages it could not translate well enough; those
    languages get eval's own fallback (params eval.zeroshot.fallback) instead.
    """
    if prompts is None:
        return {}
    table = prompts
    for flag in ("use", "valid"):
        if flag in table.columns:
            table = table[table[flag].fillna(False).astype(bool)]
            break
    if "prompt_set" in table.columns:
        table = table[table["prompt_set"] == TRANSLATED_PROMPT_SET]
    table = table.sort_values(["lang", "template_id"], kind="stable")
    out: dict[str, list[str]] = {}
    for lang, text in zip(table["lang"], table["text"]):
        if "{}" in str(text):
            out.setdefault(str(lang), []).append(str(text))
    return out


def _base_row(model, dataset: str, version: str, lang: str, prompt_set: str, seed: int) -> dict:
    return {
        "model": model.name,
        "revision": model.revision,
        "dataset": dataset,
        "dataset_version": version,
        "lang": lang,
        "prompt_set": prompt_set,
        "seed": seed,
    }


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
    control_classes: int = zeroshot.CONTROL_CLASSES,
    control_repeats: int = zeroshot.CONTROL_REPEATS,
    seed: int = 0,
    dataset_version: str = "",
    image_set_hash: str | None = None,
) -> list[dict]:
    """One row per language and prompt set; images encoded once per model via `cache`."""
    image_set_hash = image_set_hash or image_set.content_hash()
    rows = []
    for lang in sorted(labels):
        for requested in prompt_sets:
            for used, templates in zeroshot.choose_templates(
                lang, requested, translated or {}, english_templates, fallback
            ):
                templates = templates[:max_templates] if max_templates else templates
                image_emb = cache.embeddings(model, image_set, image_set_hash)  # a hit after the first language
                metrics = zeroshot.evaluate_language(
                    model.encode_texts,
                    image_emb,
                    image_set.targets,
                    labels[lang],
                    templates,
                    knowledge=knowledge,
                    control_seed=seed,
                    control_classes=control_classes,
                    control_repeats=control_repeats,
                )
                prompt_set = used + ("+knowledge" if knowledge else "")
                rows.append(
                    {
                        **_base_row(model, "babel_imagenet", dataset_version, lang, prompt_set, seed),
                        "n_templates": len(templates),
                        **metrics,
                    }
                )
    return rows


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
    ks: Sequence[int] = retrieval.DEFAULT_KS,
) -> list[dict]:
    """Recall@k both ways per language of one caption set; `resolve_lang(code)` -> registry key."""
    image_emb = cache.embeddings(model, image_set)
    rows = []
    for code in sorted(captions_by_lang):
        texts, owner = caption_pairs(captions_by_lang[code], len(image_set.files))
        metrics = retrieval.retrieval_metrics(model.encode_texts(texts), image_emb, owner, ks, chunk)
        rows.append(
            {
                **_base_row(model, dataset, dataset_version, resolve_lang(code), "captions", seed),
                "n_captions": len(texts),
                "n_images": len(image_set.files),
                **metrics,
            }
        )
    return rows


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
    if reference_lang and reference_lang in captions_by_lang:
        refs = [[str(r) for r in c if r and str(r).strip()] for c in captions_by_lang[reference_lang][:n]]
        reference_emb = encode_reference_sets(model.encode_texts, refs)
    rows = []
    for code in sorted(captions_by_lang):
        firsts = [c[0] for c in captions_by_lang[code][:n]]
        text_emb = model.encode_texts(firsts)
        scores = clip_score(image_emb, text_emb)
        foil_scores = clip_score(image_emb, np.roll(text_emb, -1, axis=0))
        row = {
            **_base_row(model, dataset, dataset_version, resolve_lang(code), "captions", seed),
            "n_images": n,
            "clipscore": float(scores.mean()),
            "pairwise_accuracy": pairwise_accuracy(scores, foil_scores),
        }
        if reference_emb is not None and code != reference_lang:
            row["ref_clipscore"] = float(np.nanmean(ref_clip_score(image_emb, text_emb, reference_emb)))
        rows.append(row)
    return rows


def mvl_sib_rows(
    model, tables: Mapping[tuple[str, str], object], image_set, cache, seed: int = 0, dataset_version: str = ""
) -> list[dict]:
    """`tables[(config, lang)]` = a task table; one row per task, k and language."""
    image_emb = cache.embeddings(model, image_set)
    by_id = {name.rsplit(".", 1)[0]: image_emb[i] for i, name in enumerate(image_set.files)}
    # The task configs of a language share its 1,004 sentences: encode each text once.
    text_memo: dict[str, np.ndarray] = {}

    def encode_once(texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in text_memo]
        if new:
            text_memo.update(zip(new, model.encode_texts(new)))
        return np.stack([text_memo[t] for t in texts])

    rows = []
    for (config, lang), table in sorted(tables.items()):
        task, k = mvl_sib.parse_config(config)
        result = mvl_sib.evaluate_table(table, task, encode_once, by_id)
        rows.append(
            {
                **_base_row(model, "mvl_sib", dataset_version, lang, "none", seed),
                "mvl_task": task,
                "k": k,
                "accuracy": result["accuracy"],
                "n": result["n"],
            }
        )
    return rows
