"""Language codes as the evaluation stages take them, resolved through the language registry.

A `languages` setting or `--language` flag may name a registry key (deu_Latn), an ISO 639-1
code (de), a BabelNet code (DE) or a caption-set code (jp); rows always carry the registry key.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import read_registry, registry
from babelforge.eval.config import CommonConfig


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
    """code -> registry key: the registry's one resolver (key, ISO 639-1/3, BabelNet, caption-set code)."""
    languages = language_registry(common)
    return lambda code: languages.resolve(code).key


def requested_languages(languages: Sequence[str] | None, resolve: Callable[[str], str]) -> list[str] | None:
    """The registry keys of a `languages` setting (None: every language), in the order given."""
    if languages is None:
        return None
    return list(dict.fromkeys(resolve(code) for code in languages))
