"""The one language registry (`resources/languages.tsv`).

Every conversion between code systems goes through it. The canonical key is the
Flores-200 form `xxx_Scrp` (ISO 639-3 + ISO 15924 script); a few BabelNet editions that
share a language and script with another (Simple English, Belarusian Taraškievica)
carry a variant suffix `xxx_Scrp-variant` so every key stays unique.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError

REGISTRY_PATH = Path(__file__).resolve().parents[2] / "resources" / "languages.tsv"
KEY_PATTERN = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}(-[a-z0-9]+)?$")

# Code systems a code can be looked up in, and the column that holds them.
CODE_SYSTEMS = ("key", "babelnet", "iso639_1", "omw", "nllb", "langid")

COLUMNS = (
    "key",
    "name",
    "iso639_3",
    "script",
    "scripts",
    "iso639_1",
    "babelnet",
    "omw",
    "nllb",
    "langid",
    "in_xlmr",
    "in_eval_100",
    "in_sib200",
    "in_babel_imagenet",
)


class UnknownLanguageError(BabelforgeError):
    def __init__(self, code: str, system: str):
        self.code, self.system = code, system
        super().__init__(
            f"unknown {system} language code {code!r}: not in resources/languages.tsv "
            f"(add a row there if the language is real)"
        )


@dataclass(frozen=True)
class Language:
    key: str
    name: str
    iso639_3: str
    script: str  # primary ISO 15924 script of the key
    scripts: tuple[str, ...]  # Unicode scripts text in this language is expected to use
    iso639_1: str | None
    babelnet: str | None
    omw: tuple[str, ...]  # OMW / wn language codes that mean this language
    nllb: str | None  # NLLB-200 code, or None when NLLB cannot translate it
    langid: str | None  # langid.py code, or None when langid does not know it
    in_xlmr: bool
    in_eval_100: bool  # the Babel-ImageNet paper's 100 evaluation languages
    in_sib200: bool
    in_babel_imagenet: bool  # one of the 298 languages of the Babel-ImageNet release

    @property
    def expected_scripts(self) -> tuple[str, ...]:
        """`scripts` plus the key's own script: `Hans` / `Hant` beside the plain `Hani` is
        what lets a script check tell Simplified from Traditional Chinese."""
        return tuple(dict.fromkeys((*self.scripts, self.script)))


def _optional(value: str) -> str | None:
    return value or None


def _flag(value: str, where: str) -> bool:
    if value not in ("True", "False"):
        raise BabelforgeError(f"{where}: expected True or False, got {value!r}")
    return value == "True"


def parse_row(row: dict[str, str], where: str) -> Language:
    key = row["key"]
    if not KEY_PATTERN.match(key):
        raise BabelforgeError(f"{where}: key {key!r} is not of the form xxx_Scrp")
    return Language(
        key=key,
        name=row["name"],
        iso639_3=row["iso639_3"],
        script=row["script"],
        scripts=tuple(s for s in row["scripts"].split(",") if s),
        iso639_1=_optional(row["iso639_1"]),
        babelnet=_optional(row["babelnet"]),
        omw=tuple(code for code in row["omw"].split(",") if code),
        nllb=_optional(row["nllb"]),
        langid=_optional(row["langid"]),
        in_xlmr=_flag(row["in_xlmr"], where),
        in_eval_100=_flag(row["in_eval_100"], where),
        in_sib200=_flag(row["in_sib200"], where),
        in_babel_imagenet=_flag(row["in_babel_imagenet"], where),
    )


class LanguageRegistry:
    """Lookups by canonical key and by every other code system."""

    def __init__(self, languages: list[Language]):
        self._by_key: dict[str, Language] = {}
        self._by_system: dict[str, dict[str, Language]] = {system: {} for system in CODE_SYSTEMS}
        for language in languages:
            if language.key in self._by_key:
                raise BabelforgeError(f"languages.tsv: key {language.key} appears twice")
            self._by_key[language.key] = language
            codes = {
                "key": [language.key],
                "babelnet": [language.babelnet] if language.babelnet else [],
                "iso639_1": [language.iso639_1] if language.iso639_1 else [],
                "omw": list(language.omw),
                "nllb": [language.nllb] if language.nllb else [],
                "langid": [language.langid] if language.langid else [],
            }
            for system, values in codes.items():
                for code in values:
                    # nllb and langid codes may be shared (e.g. a macro-language row and its
                    # main variety); the first row in the file is the canonical target.
                    if code in self._by_system[system] and system not in ("nllb", "langid"):
                        other = self._by_system[system][code].key
                        raise BabelforgeError(
                            f"languages.tsv: {system} code {code} is on both {other} and {language.key}"
                        )
                    self._by_system[system].setdefault(code, language)

    def __iter__(self) -> Iterator[Language]:
        return iter(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def __contains__(self, key: object) -> bool:
        return key in self._by_key

    def get(self, key: str) -> Language:
        return self.lookup(key, "key")

    def lookup(self, code: str, system: str) -> Language:
        """The language with `code` in code system `system`; UnknownLanguageError if none."""
        if system not in self._by_system:
            raise BabelforgeError(f"unknown code system {system!r}; one of {', '.join(CODE_SYSTEMS)}")
        try:
            return self._by_system[system][code]
        except KeyError:
            raise UnknownLanguageError(code, system) from None

    def from_babelnet(self, code: str) -> Language:
        return self.lookup(code.upper(), "babelnet")

    def from_omw(self, code: str) -> Language:
        return self.lookup(code, "omw")

    def from_nllb(self, code: str) -> Language:
        return self.lookup(code, "nllb")

    def keys(self) -> list[str]:
        return list(self._by_key)


def read_registry(path: str | Path = REGISTRY_PATH) -> LanguageRegistry:
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = set(COLUMNS) - set(reader.fieldnames or ())
        if missing:
            raise BabelforgeError(f"{path}: missing columns {', '.join(sorted(missing))}")
        languages = [parse_row(row, f"{path}:{number}") for number, row in enumerate(reader, start=2)]
    return LanguageRegistry(languages)


@functools.lru_cache(maxsize=1)
def registry() -> LanguageRegistry:
    """The project's registry, read once per process."""
    return read_registry(REGISTRY_PATH)
