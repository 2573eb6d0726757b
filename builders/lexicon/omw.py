"""Open Multilingual Wordnet senses, from the raw `.tab` files or from WN-LMF packages.

Raw layout (what `fetch` copies from the mirror or downloads): `wns/<project>/wn-data-<lang>.tab`
(expert wordnets, source `omw:<project>`), `wns/wikt/wn-wikt-<lang>.tab` (Wiktionary, source
`wikt`), `wns/cldr/wn-cldr-<lang>.tab` (CLDR, source `cldr`). A file starts with
`# <name>\\t<lang>\\t<url>\\t<licence>` and then has `<offset>-<pos>\\t<type>\\t<value>` rows; only
`lemma` rows are senses (`def`, `exe`, `lemma:root`, `lemma:brokenplural` are not).

The WN-LMF path reads the same wordnets as packaged for the `wn` library (what
`wn.download("omw:1.4")` fetches online), so a user with those packages gets the same senses.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import sha256_file
from babelforge.core.languages import LanguageRegistry, UnknownLanguageError
from babelforge.core.languages import registry as default_registry
from babelforge.lexicon.senses import Sense

SYNSET_PATTERN = re.compile(r"(\d{8})-([nvasr])$")
# OMW does not mark any of its senses as machine-translated; the expert wordnets were
# built by the expand method with manual checking, Wiktionary/CLDR by human editors.
OMW_IS_TRANSLATION = False
DEFAULT_SOURCE_ORDER = ("omw", "wikt", "cldr")


@dataclass(frozen=True)
class TabFile:
    """One OMW `.tab` file and what its header says."""

    path: Path
    source: str  # omw:<project>, wikt or cldr
    omw_code: str  # the language code the file declares
    lang: str  # registry key
    name: str
    url: str
    licence: str


def _source_kind(source: str) -> str:
    return source.split(":", 1)[0]


def normalise_tab_code(code: str) -> str:
    """OMW writes some private codes as `*aus-dar` in headers and `Xaus-dar` in file names."""
    return "X" + code[1:] if code.startswith("*") else code


def _decode(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BabelforgeError(
            f"{path}:{number}: not UTF-8 ({error.reason} at byte {error.start} of the line)"
        ) from None


def parse_header(line: str, path: Path) -> tuple[str, str, str, str]:
    if not line.startswith("#"):
        raise BabelforgeError(f"{path}:1: expected an OMW header `# name<TAB>lang<TAB>url<TAB>licence`")
    fields = [field.strip() for field in line[1:].rstrip("\r\n").split("\t")]
    fields += [""] * (4 - len(fields))
    name, code, url, licence = fields[:4]
    if not code:
        raise BabelforgeError(f"{path}:1: OMW header names no language")
    return name, normalise_tab_code(code), url, licence


def discover_tab_files(root: str | Path, languages: LanguageRegistry | None = None) -> list[TabFile]:
    """Every `.tab` file under `<root>/wns` (or `root` itself when it is the wns folder), sorted."""
    languages = languages or default_registry()
    root = Path(root)
    wns = root / "wns" if (root / "wns").is_dir() else root
    if not wns.is_dir():
        raise BabelforgeError(f"{root}: no OMW `wns/` folder; run `babelforge fetch` or point senses.omw_dir at it")
    files = []
    for path in sorted(wns.glob("*/*.tab")):
        project = path.parent.name
        source = project if project in ("wikt", "cldr") else f"omw:{project}"
        with path.open("rb") as handle:
            name, code, url, licence = parse_header(_decode(handle.readline(), path, 1), path)
        try:
            lang = languages.from_omw(code).key
        except UnknownLanguageError:
            raise BabelforgeError(
                f"{path}: OMW language code {code!r} is not in resources/languages.tsv (column omw); add it there"
            ) from None
        files.append(TabFile(path, source, code, lang, name, url, licence))
    if not files:
        raise BabelforgeError(f"{wns}: no OMW .tab files found")
    return files


def read_tab_lemmas(tab: TabFile) -> Iterator[tuple[str, str]]:
    """(synset, lemma) pairs of a `.tab` file, in file order."""
    with tab.path.open("rb") as handle:
        next(handle)
        for number, raw in enumerate(handle, start=2):
            if not raw.endswith(b"\n"):  # every OMW file ends with a newline: this one was cut off
                raise BabelforgeError(
                    f"{tab.path}:{number}: the file ends in the middle of a row (truncated?); "
                    "fetch it again (`babelforge fetch --sources omw`)"
                )
            line = _decode(raw, tab.path, number)
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\r\n").split("\t")  # a file saved with CRLF ends: no lemma keeps a `\r`
            if len(parts) < 3:
                raise BabelforgeError(f"{tab.path}:{number}: expected 3 tab-separated fields, got {len(parts)}")
            synset, kind, value = parts[0], parts[1], parts[2]
            # `lemma` or `<lang>:lemma`; other types (def, exe, lemma:root...) are not senses
            if kind.rsplit(":", 1)[-1] != "lemma" or kind.count(":") > 1:
                continue
            if not SYNSET_PATTERN.fullmatch(synset):
                raise BabelforgeError(f"{tab.path}:{number}: {synset!r} is not a WordNet offset id like 01440764-n")
            if value.strip():
                yield synset, value


def rank_senses(rows: Iterable[tuple[str, str, str, str]], source_order: Sequence[str]) -> list[Sense]:
    """Rank (synset, lang, lemma, source) rows per (synset, lang).

    Order: source kind as in `source_order` (expert wordnets before Wiktionary before CLDR,
    by default), then the source name, then the order the rows came in. The same lemma
    from the same source is kept once.
    """
    priority = {kind: index for index, kind in enumerate(source_order)}
    grouped: dict[tuple[str, str], list[tuple[int, str, int, str]]] = defaultdict(list)
    seen: set[tuple[str, str, str, str]] = set()
    for arrival, (synset, lang, lemma, source) in enumerate(rows):
        if (synset, lang, lemma, source) in seen:
            continue
        seen.add((synset, lang, lemma, source))
        kind = _source_kind(source)
        if kind not in priority:
            raise BabelforgeError(f"source {source!r} is not in the source order {list(source_order)}")
        grouped[(synset, lang)].append((priority[kind], source, arrival, lemma))
    senses = []
    for (synset, lang), items in sorted(grouped.items()):
        for rank, (_, source, _, lemma) in enumerate(sorted(items)):
            senses.append(Sense(synset, lang, lemma, source, OMW_IS_TRANSLATION, rank))
    return senses


class OmwSource:
    """Senses from the raw OMW `.tab` files (wordnets, Wiktionary, CLDR)."""

    name = "omw"

    def __init__(
        self,
        root: str | Path,
        languages: LanguageRegistry | None = None,
        source_order: Sequence[str] = DEFAULT_SOURCE_ORDER,
    ):
        self.root = Path(root)
        self.languages = languages or default_registry()
        self.source_order = tuple(source_order)
        self.files = discover_tab_files(self.root, self.languages)

    def senses(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> Iterator[Sense]:
        wanted = set(synsets)
        wanted_langs = set(langs) if langs is not None else None

        def rows():
            for tab in self.files:
                if wanted_langs is not None and tab.lang not in wanted_langs:
                    continue
                for synset, lemma in read_tab_lemmas(tab):
                    if synset in wanted:
                        yield synset, tab.lang, lemma, tab.source

        yield from rank_senses(rows(), self.source_order)

    def source_records(self) -> dict[str, dict]:
        """Per file: the header's name, language, licence and the file's sha256 (for provenance and cards)."""

        base = self.root
        return {
            str(tab.path.relative_to(base)): {
                "source": tab.source,
                "omw_code": tab.omw_code,
                "lang": tab.lang,
                "name": tab.name,
                "url": tab.url,
                "licence": tab.licence,
                "sha256": sha256_file(tab.path),
            }
            for tab in self.files
        }


class WnLmfSource:
    """The same OMW senses read from WN-LMF packages through the `wn` library.

    `packages` are WN-LMF XML files (or `wn` project specifiers such as `omw-fr:1.4` already
    in the `wn` database). `data_dir` is the `wn` database folder. Source names follow the raw
    layout: lexicon `omw-<project>` becomes `omw:<project>` unless `source_names` says otherwise.
    """

    name = "omw-lmf"

    def __init__(
        self,
        packages: Sequence[str | Path],
        data_dir: str | Path,
        languages: LanguageRegistry | None = None,
        source_names: dict[str, str] | None = None,
        source_order: Sequence[str] = DEFAULT_SOURCE_ORDER,
    ):
        self.packages = list(packages)
        self.data_dir = Path(data_dir)
        self.languages = languages or default_registry()
        self.source_names = dict(source_names or {})
        self.source_order = tuple(source_order)

    def _lexicons(self):
        import wn

        self.data_dir.mkdir(parents=True, exist_ok=True)
        wn.config.data_directory = str(self.data_dir)
        lexicons = []
        for package in self.packages:
            path = Path(package)
            if path.exists():
                before = {lex.specifier() for lex in wn.lexicons()}
                wn.add(path, progress_handler=None)
                added = [lex for lex in wn.lexicons() if lex.specifier() not in before]
                # re-adding a package already in the database adds nothing: find it by file content
                lexicons.extend(added or self._lexicons_in_file(path))
            else:
                found = wn.lexicons(lexicon=str(package))
                if not found:
                    raise BabelforgeError(
                        f"WN-LMF package {package!r}: not a file and not in the wn database {self.data_dir}"
                    )
                lexicons.extend(found)
        return lexicons

    @staticmethod
    def _lexicons_in_file(path: Path):
        import wn

        ids = set(re.findall(r'<Lexicon[^>]*\sid="([^"]+)"', path.read_text(encoding="utf-8")))
        return [lex for lex in wn.lexicons() if lex.id in ids]

    def _lang_of(self, lexicon) -> str:
        tag = lexicon.language
        base = tag.split("-")[0]
        # the full tag first: `cmn-Hant` is an OMW code of its own (Traditional), `cmn` is not
        for code, system in ((tag, "omw"), (base, "iso639_1"), (base, "omw"), (tag.replace("-", "_"), "key")):
            try:
                return self.languages.lookup(code, system).key
            except UnknownLanguageError:
                continue
        raise BabelforgeError(f"WN-LMF lexicon {lexicon.id}: language {tag!r} is not in resources/languages.tsv")

    def senses(self, synsets: Iterable[str], langs: Iterable[str] | None = None) -> Iterator[Sense]:
        import wn

        wanted = set(synsets)
        wanted_langs = set(langs) if langs is not None else None

        def rows():
            for lexicon in self._lexicons():
                lang = self._lang_of(lexicon)
                if wanted_langs is not None and lang not in wanted_langs:
                    continue
                project = lexicon.id.removeprefix("omw-")
                source = self.source_names.get(lexicon.id, f"omw:{project}")
                for synset in wn.Wordnet(lexicon=lexicon.specifier()).synsets():
                    match = SYNSET_PATTERN.search(synset.id)
                    if not match or f"{match[1]}-{match[2]}" not in wanted:
                        continue
                    for lemma in synset.lemmas():
                        yield f"{match[1]}-{match[2]}", lang, lemma, source

        yield from rank_senses(rows(), self.source_order)
