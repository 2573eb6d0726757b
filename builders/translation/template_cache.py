"""On-disk cache of translated CLIP templates, one JSON file per language and translation setup.

Translating the templates is the slow part of `babelforge prompts` (minutes per hundred languages
on CPU); tagging and checking them takes milliseconds. A change to the label language list (say
`labels.min_classes`) reruns the stage, and without a cache every language was translated again.
The key covers everything the translation depends on: the model's files, the translator settings
(device and precision included: int8 on CPU and float16 on GPU decode differently), the slot
strategies, the templates and the language's codes. Checks and thresholds are not in the key:
they are applied after the cache, so changing them never needs a translation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from babelforge.core.io import canonical_json, read_json, sha256_file, write_json
from babelforge.translation.placeholders import TranslatedTemplate


def model_fingerprint(model_dir: str | Path) -> str:
    """sha256 over the names and contents of every file of a model directory."""
    digest = hashlib.sha256()
    root = Path(model_dir)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def translation_key(
    setup: dict[str, Any], lang: str, nllb_code: str, templates: Sequence[str], strategies: Sequence[str]
) -> str:
    """The cache key of one language's translation: sha256 of every input that can change it."""
    record = {
        "setup": setup,
        "lang": lang,
        "nllb_code": nllb_code,
        "templates": list(templates),
        "strategies": list(strategies),
    }
    return hashlib.sha256(canonical_json(record).encode()).hexdigest()


class TemplateCache:
    """Translated templates per language under `root`; `setup` = model fingerprint + translator settings."""

    def __init__(self, root: str | Path, setup: dict[str, Any]):
        self.root = Path(root)
        self.setup = setup
        self.hits: list[str] = []
        self.misses: list[str] = []

    def translations(
        self,
        lang: str,
        nllb_code: str,
        templates: Sequence[str],
        strategies: Sequence[str],
        translate: Callable[[], list[TranslatedTemplate]],
    ) -> list[TranslatedTemplate]:
        """The language's translated templates, calling `translate` only on a cache miss."""
        key = translation_key(self.setup, lang, nllb_code, templates, strategies)
        path = self.root / f"{lang}-{key[:24]}.json"
        if path.exists():
            entry = read_json(path)
            if entry.get("key") == key:
                self.hits.append(lang)
                return [TranslatedTemplate(**row) for row in entry["templates"]]
        self.misses.append(lang)
        translated = translate()
        write_json(
            {"key": key, "lang": lang, "nllb_code": nllb_code, "templates": [asdict(row) for row in translated]}, path
        )
        return translated
