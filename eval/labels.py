"""The built Babel-ImageNet tables as the evaluations read them (zero-shot, the CLIP_benchmark
export): the best label per class and language, the usable translated templates, and the English
CLIP templates."""

from __future__ import annotations

from babelforge.core.errors import BabelforgeError
from babelforge.core.resources import resource

# The language of the English CLIP templates.
# The package's copy (babelforge.core.resources), so a project folder without resources/ still finds them.
ENGLISH_TEMPLATES = resource("clip_templates_en.txt")
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


def select_languages(labels: dict[str, dict[int, str]], wanted: list[str] | None, where: str) -> dict:
    """`labels` restricted to the wanted registry keys (None: all); a wanted key without labels is an error."""

    if wanted is None:
        return labels
    unknown = [lang for lang in wanted if lang not in labels]
    if unknown:
        raise BabelforgeError(f"eval.zeroshot.languages: {', '.join(unknown)} have no labels in {where}")
    return {lang: labels[lang] for lang in wanted}
