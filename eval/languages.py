"""Language codes as the evaluation stages take them, resolved through the language registry.

A `languages` setting or `--language` flag may name a registry key (deu_Latn), an ISO 639-1
code (de), a BabelNet code (DE) or a caption-set code (jp); rows always carry the registry key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import UnknownLanguageError, read_registry, registry
from babelforge.eval.config import CommonConfig

# XTD10 names Japanese `jp`; every other caption-set code is ISO 639-1.
CAPTION_CODE_ALIASES = {"jp": "ja"}


def language_registry(common: CommonConfig):

    if common.registry is None:
        return registry()
    path = Path(common.registry)
    if not path.is_file():
        raise BabelforgeError(
            f"language registry {path} is missing; set params.yaml eval.common.registry "
            "or leave it null for resources/languages.tsv"
        )
    return read_registry(path)


def language_resolver(common: CommonConfig) -> Callable[[str], str]:
    """code -> registry key, for a registry key (deu_Latn), ISO 639-1 (de), BabelNet (DE) or caption-set code (jp)."""

    languages = language_registry(common)

    def resolve(code: str) -> str:
        code = CAPTION_CODE_ALIASES.get(code, code)
        for system, value in (("key", code), ("iso639_1", code.lower()), ("babelnet", code.upper())):
            try:
                return languages.lookup(value, system).key
            except UnknownLanguageError:
                continue
        raise BabelforgeError(
            f"unknown language {code!r}: give a registry key (deu_Latn), an ISO 639-1 code (de) "
            "or a BabelNet code (DE) of resources/languages.tsv"
        )

    return resolve


def requested_languages(languages: Sequence[str] | None, resolve: Callable[[str], str]) -> list[str] | None:
    """The registry keys of a `languages` setting (None: every language), in the order given."""
    if languages is None:
        return None
    return list(dict.fromkeys(resolve(code) for code in languages))
