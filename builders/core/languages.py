"""The one language registry (`resources/languages.tsv`).

Every conversion between code systems goes through it. The canonical key is the
Flores-200 form `xxx_Scrp` (ISO 639-3 + ISO 15924 script); a few BabelNet editions that
share a language and script with another (Simple English, Belarusian Taraškievica)
carry a variant suffix `xxx_Scrp-variant` so every key stays unique.

A stage that maps only the languages of the data it reads takes a *view* of the registry instead
(`build/languages/<view>.tsv`: the registry's rows for those languages, byte for byte, written by
the `language_view` stage; `Stage(languages=...)` names the views, the command line points
`registry()` at them). Its dependency is then its view, not the whole registry: a language added
to the registry reruns only the stages whose data has it.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.resources import resource
from babelforge.core.tsv import BOOLEAN, Check, TsvSpec, matching, read_tsv, tsv_rows

REGISTRY_PATH = resource("languages.tsv")
ENGLISH = "eng_Latn"  # the source language of every dataset
KEY_PATTERN = re.compile(r"^[a-z]{3}_[A-Z][a-z]{3}(-[a-z0-9]+)?$")

# Code systems a code can be looked up in, and the column that holds them.
CODE_SYSTEMS = ("key", "babelnet", "iso639_1", "omw", "nllb", "langid")
# Codes users meet that are no standard's: XTD10 names Japanese `jp`.
CODE_ALIASES = {"jp": "ja"}

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
FLAG_COLUMNS = ("in_xlmr", "in_eval_100", "in_sib200", "in_babel_imagenet")
SCRIPT = r"[A-Z][a-z]{3}"  # an ISO 15924 code
KEY_FORM = Check(lambda value: KEY_PATTERN.match(value) is not None, "of the form xxx_Scrp")
SCRIPTS_FORM = matching(rf"{SCRIPT}(,{SCRIPT})*", "a comma list of ISO 15924 script codes (Latn,Cyrl)")
TABLE = TsvSpec(
    COLUMNS,
    required=("key", "name", "iso639_3", "script", "scripts", *FLAG_COLUMNS),
    unique=(("key",),),
    checks={
        "key": KEY_FORM,
        "iso639_3": matching(r"[a-z]{3}", "an ISO 639-3 code (three lower-case letters)"),
        "script": matching(SCRIPT, "an ISO 15924 script code (Latn)"),
        "scripts": SCRIPTS_FORM,
        **{flag: BOOLEAN for flag in FLAG_COLUMNS},
    },
)


class UnknownLanguageError(BabelforgeError):
    def __init__(self, code: str, system: str):
        self.code, self.system = code, system
        super().__init__(
            f"unknown {system} language code {code!r}: not in resources/languages.tsv (generated: if the language is "
            f"real, record it in resources/language_overrides.tsv, then run scripts/build_language_registry.py; "
            f"docs/guides/add-a-language.md)"
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


def parse_row(row: dict[str, str]) -> Language:
    """A row `read_tsv` checked against `TABLE` as a Language."""
    return Language(
        key=row["key"],
        name=row["name"],
        iso639_3=row["iso639_3"],
        script=row["script"],
        scripts=tuple(s for s in row["scripts"].split(",") if s),
        iso639_1=_optional(row["iso639_1"]),
        babelnet=_optional(row["babelnet"]),
        omw=tuple(code for code in row["omw"].split(",") if code),
        nllb=_optional(row["nllb"]),
        langid=_optional(row["langid"]),
        **{flag: row[flag] == "True" for flag in FLAG_COLUMNS},
    )


class LanguageRegistry:
    """Lookups by canonical key and by every other code system."""

    def __init__(self, languages: list[Language], where: str = "languages.tsv", lines: list[int] | None = None):
        """`where`: the file the rows came from and `lines` their line numbers, for the one line a
        key or code given twice stops with."""
        self._by_key: dict[str, Language] = {}
        self._by_system: dict[str, dict[str, Language]] = {system: {} for system in CODE_SYSTEMS}
        for index, language in enumerate(languages):
            at = f"{where}:{lines[index]}" if lines else where
            if language.key in self._by_key:
                raise BabelforgeError(f"{at}: key {language.key} appears twice")
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
                        raise BabelforgeError(f"{at}: {system} code {code} is on both {other} and {language.key}")
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

    def resolve(self, code: str) -> Language:
        """The language a user means by `code`, named any way a command takes it: a registry key
        (deu_Latn), ISO 639-1 (de), ISO 639-3 (deu; one script only), a BabelNet code (DE) or a
        caption-set code (jp). An error with the likeliest keys when nothing matches."""
        code = code.strip()
        code = CODE_ALIASES.get(code.lower(), code)
        for system, value in (("key", code), ("iso639_1", code.lower()), ("babelnet", code.upper())):
            if value in self._by_system[system]:
                return self._by_system[system][value]
        scripts = [language for language in self if language.iso639_3 == code.lower()]
        if len(scripts) == 1:
            return scripts[0]
        if scripts:
            raise BabelforgeError(
                f"language {code!r} is written in several scripts here: give one of "
                f"{', '.join(language.key for language in scripts)}"
            )
        raise BabelforgeError(f"unknown language {code!r}{self._suggestion(code)}")

    def _suggestion(self, code: str) -> str:
        """'; did you mean ...?' from the keys and names nearest to `code` (difflib), or a hint."""
        names = {language.name.lower(): language.key for language in self}
        near = difflib.get_close_matches(code, list(self._by_key), n=3, cutoff=0.6)
        near += [names[name] for name in difflib.get_close_matches(code.lower(), list(names), n=3, cutoff=0.75)]
        near = list(dict.fromkeys(near))[:3]
        if near:
            return f"; did you mean {' or '.join(near)}?"
        return "; give a registry key (deu_Latn), an ISO 639-1 (de) or 639-3 (deu) code or a BabelNet code (DE)"


def registry_of_text(text: str, where: str) -> LanguageRegistry:
    """The registry a languages.tsv text holds, by the one rule every reader of the registry, its views
    and the view writer apply (columns, forms, typed-text rule, a key or a code system's code once);
    one line `where:line: ...` at the first problem."""
    return _registry_of_rows(tsv_rows(text, TABLE, where), where)


def read_registry(path: str | Path = REGISTRY_PATH) -> LanguageRegistry:
    return _registry_of_rows(read_tsv(path, TABLE), str(path))


def _registry_of_rows(rows: list[tuple[int, dict[str, str]]], where: str) -> LanguageRegistry:
    return LanguageRegistry([parse_row(row) for _, row in rows], where, [line for line, _ in rows])


def registry() -> LanguageRegistry:
    """The project's registry, read once per process; while `language_views` is in force, the rows
    of those views only."""
    return _registry_of(os.environ.get(VIEWS_ENVIRONMENT, ""))


# The view files `registry()` reads, joined by os.pathsep; set by `language_views` (an environment
# variable, so the processes a stage starts, local Ray workers among them, read the same rows).
VIEWS_ENVIRONMENT = "BABELFORGE_LANGUAGE_VIEWS"


@functools.lru_cache(maxsize=4)
def _registry_of(views: str) -> LanguageRegistry:
    if not views:
        return read_registry(REGISTRY_PATH)
    merged = {language.key: language for path in views.split(os.pathsep) for language in read_registry(path)}
    return LanguageRegistry([merged[key] for key in sorted(merged)])  # the registry's order: by key


@contextlib.contextmanager
def language_views(paths: Iterable[str | Path]):
    """`registry()` is the rows of these views while inside (a stage that reads only them)."""
    files = [str(path) for path in paths]
    if not files:
        yield
        return
    missing = [path for path in files if not Path(path).is_file()]
    if missing:
        raise BabelforgeError(
            f"language view {', '.join(missing)} not found: `dvc repro` writes it (`babelforge language_view <name>`)"
        )
    before = os.environ.get(VIEWS_ENVIRONMENT)
    os.environ[VIEWS_ENVIRONMENT] = os.pathsep.join(files)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VIEWS_ENVIRONMENT, None)
        else:
            os.environ[VIEWS_ENVIRONMENT] = before


def view_text(text: str, keys: Iterable[str], where: str = "resources/languages.tsv") -> str:
    """The view of `keys`: the registry file's header and its rows for those keys, byte for byte,
    in the registry's order (a key it does not have is an error naming it). The whole registry text
    is checked first, by the rule `registry()` reads it with: a view is never written from a
    registry the stages reading the view would refuse."""
    registry_of_text(text, where)
    wanted = set(keys)
    lines = text.splitlines(keepends=True)
    rows = [line for line in lines[1:] if line.split("\t", 1)[0] in wanted]
    unknown = wanted - {line.split("\t", 1)[0] for line in rows}
    if unknown:
        raise BabelforgeError(
            f"language view: {', '.join(sorted(unknown))} not in the registry (resources/languages.tsv)"
        )
    return "".join(lines[:1] + rows)
