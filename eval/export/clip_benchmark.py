"""Babel-ImageNet in CLIP_benchmark's file layout, and back.

CLIP_benchmark (`clip_benchmark eval --dataset babel_imagenet --language de`) reads two
JSON files from its `clip_benchmark/datasets/` folder, keyed by the upper-cased language
code the user types (the BabelNet code, e.g. `DE`):

  babel_imagenet.json         {CODE: [[class_idx, ...], [label, ...]]}, classes ascending
  nllb_dist13b_prompts.json   {CODE: [template, ...]}, each template with one `{}` slot

Every language of the labels gets a template list: its usable translated prompts in
`nllb_dist13b_prompts.json` (English: the CLIP templates themselves), else the fallback set in a
file named for it, `nllb_dist13b_prompts.en-fallback.json` (the English templates) or
`.label-fallback.json` (the bare label). CLIP_benchmark reads only the first, so a fallback
language is never scored under the translated prompts' name; merge its file in to score it
anyway. `export.json` names each language's set and file beside the provenance. Pure functions
over plain data; the stage module writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import atomic_directory, canonical_json

LABELS_FILE = "babel_imagenet.json"
PROMPTS_FILE = "nllb_dist13b_prompts.json"
# The file of each fallback set (export_templates' names): never the translated prompts' file.
FALLBACK_FILES = {
    "english-fallback": "nllb_dist13b_prompts.en-fallback.json",
    "label-fallback": "nllb_dist13b_prompts.label-fallback.json",
}
MANIFEST_FILE = "export.json"


def prompts_file(kind: str) -> str:
    """The file a language's templates go to, by the set it got (`translated`, `english`, a fallback)."""
    return FALLBACK_FILES.get(kind, PROMPTS_FILE)


def prompt_files(prompts: Mapping[str, Sequence[str]], kinds: Mapping[str, str]) -> dict[str, dict]:
    """{file name: {CODE: [template...]}}: each language's templates in the file of its set (`kinds`,
    by code); the translated prompts' file is always there, fallback files only when used."""
    files: dict[str, dict] = {PROMPTS_FILE: {}}
    for code, templates in prompts.items():
        files.setdefault(prompts_file(kinds[code]), {})[code] = list(templates)
    return files


def usable_template(text: str) -> bool:
    """One `{}` slot and no other brace: CLIP_benchmark fills templates with `str.format`."""
    return text.count("{}") == 1 and text.count("{") == 1 and text.count("}") == 1


def layout(
    labels: Mapping[str, Mapping[int, str]], templates: Mapping[str, Sequence[str]], code_of: Mapping[str, str]
) -> tuple[dict, dict]:
    """({CODE: [[idx...], [label...]]}, {CODE: [template...]}) for the languages of `labels`.

    `code_of` maps a registry key to the code CLIP_benchmark users type; two languages with
    one code, or a language without templates, is an error.
    """
    classnames: dict[str, list] = {}
    prompts: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for lang in sorted(labels):
        code = code_of[lang].upper()
        if code in owner:
            raise BabelforgeError(
                f"languages {owner[code]} and {lang} both export as {code!r}; choose one with --language"
            )
        owner[code] = lang
        if not templates.get(lang):
            raise BabelforgeError(f"language {lang}: no templates to export")
        bad = [t for t in templates[lang] if not usable_template(t)]
        if bad:
            raise BabelforgeError(f"language {lang}: template {bad[0]!r} needs exactly one {{}} and no other brace")
        class_ids = sorted(labels[lang])
        classnames[code] = [class_ids, [labels[lang][c] for c in class_ids]]
        prompts[code] = list(templates[lang])
    return classnames, prompts


def write_layout(folder: str | Path, classnames: Mapping, prompts: Mapping[str, Mapping], manifest: Mapping) -> Path:
    """The labels, the prompt files (`prompt_files`) and `export.json`, written as one folder (atomic)."""

    with atomic_directory(folder) as tmp:
        # CLIP_benchmark's own files are compact JSON in code order; keep the same shape.
        for name, document in ((LABELS_FILE, classnames), *prompts.items()):
            (tmp / name).write_text(
                json.dumps(dict(sorted(document.items())), ensure_ascii=False) + "\n", encoding="utf-8"
            )
        (tmp / MANIFEST_FILE).write_text(canonical_json(dict(manifest)), encoding="utf-8")
    return Path(folder)


def read_fallbacks(folder: str | Path) -> dict[str, dict[str, list[str]]]:
    """{fallback set: {CODE: templates}} of an export, from the fallback files it has."""
    folder = Path(folder)
    return {
        kind: json.loads((folder / name).read_text(encoding="utf-8"))
        for kind, name in FALLBACK_FILES.items()
        if (folder / name).is_file()
    }


def read_layout(folder: str | Path) -> tuple[dict[str, dict[int, str]], dict[str, list[str]]]:
    """The export read back as CLIP_benchmark reads it: ({CODE: {class_idx: label}}, {CODE: templates}),
    the templates from the translated prompts' file only (`read_fallbacks` reads the others)."""
    folder = Path(folder)
    classnames = json.loads((folder / LABELS_FILE).read_text(encoding="utf-8"))
    prompts = json.loads((folder / PROMPTS_FILE).read_text(encoding="utf-8"))
    labels = {}
    for code, (class_ids, names) in classnames.items():
        if len(class_ids) != len(names):
            raise BabelforgeError(
                f"{folder / LABELS_FILE}: {code} has {len(class_ids)} classes but {len(names)} labels"
            )
        labels[code] = dict(zip(map(int, class_ids), names))
    return labels, {code: list(templates) for code, templates in prompts.items()}
