#!/usr/bin/env python
"""Rebuild `resources/languages.tsv` from its sources, deterministically.

Inputs (nothing else; no network):
  - the Babel-ImageNet language list and the SIB-200 codes (`<data>/languages/`),
  - the OMW mirror (`<data>/omw/`): language code of every `.tab` file (file name, header,
    lemma tags), the script its lemmas are written in, and the wn package languages of `index.toml`,
  - `resources/language_overrides.tsv`: hand decisions where inference is wrong or ambiguous
    (macro-languages, Wikipedia-specific codes, Chinese scripts...), each with its reason,
  - the NLLB-200 codes shipped in transformers and the language list of langid's model,
  - ISO 639 / likely-script facts from `langcodes` (generation-time only: the registry reader
    never needs it).

Usage: python scripts/build_language_registry.py [--data ../shared/data] [--out resources/languages.tsv]
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from babelforge.core import tsv  # noqa: E402
from babelforge.core.errors import BabelforgeError  # noqa: E402
from babelforge.core.languages import COLUMNS, KEY_FORM, SCRIPTS_FORM  # noqa: E402

OVERRIDE_COLUMNS = ("system", "code", "key", "name", "scripts", "iso639_1", "nllb", "langid", "in_xlmr", "reason")
OVERRIDES_PATH = ROOT / "resources" / "language_overrides.tsv"
OVERRIDES_TABLE = tsv.TsvSpec(
    OVERRIDE_COLUMNS,
    required=("system", "code", "key", "reason"),  # an override without its reason is a guess nobody can check
    unique=(("system", "code"),),
    checks={
        "system": tsv.one_of("babelnet", "omw", "key"),
        "key": KEY_FORM,
        "scripts": SCRIPTS_FORM,
        "in_xlmr": tsv.BOOLEAN,
    },
)
DEFAULT_DATA = ROOT / ".." / "shared" / "data"
DEFAULT_OUT = ROOT / "resources" / "languages.tsv"

# The 100 languages of XLM-R (Conneau et al. 2020, Table 6) as ISO 639-1 codes (or 639-3 where it
# has none); the paper's romanised / Zawgyi duplicates (bn_rom, hi_rom, my_zaw, ta_rom, te_rom,
# ur_rom) are the same languages. Traditional Chinese is marked through the overrides.
XLMR_LANGUAGES = frozenset(
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he "
    "hi hr hu hy id is it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no om "
    "or pa pl ps pt ro ru sa sd si sk sl so sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi zh".split()
)

# Scripts whose letters count as "Han" when matching OMW content to a key's script.
HAN_KEY_SCRIPTS = {"Hans", "Hant", "Hani"}
# Key script -> Unicode scripts expected in text, where they differ from the key script.
EXPANDED_SCRIPTS = {
    "Hans": ("Hani",),
    "Hant": ("Hani",),
    "Jpan": ("Hani", "Hira", "Kana"),
    "Kore": ("Hang", "Hani"),
}
# Unicode script property values (ISO 15924 aliases) looked for in OMW lemmas.
CONTENT_SCRIPTS = (
    "Latn Cyrl Arab Hani Hira Kana Hang Deva Grek Hebr Armn Geor Thai Beng Taml Telu Knda Mlym Gujr "
    "Guru Orya Sinh Mymr Khmr Laoo Tibt Ethi Cher Cans Syrc Thaa Mong Goth Ugar Copt Olck Talu Tfng "
    "Yiii Glag Runr Nkoo"
).split()


@dataclass
class Row:
    key: str
    name: str = ""
    scripts: tuple[str, ...] = ()
    iso639_1: str = ""
    babelnet: str = ""
    omw: set[str] = field(default_factory=set)
    nllb: str = ""
    langid: str = ""
    in_xlmr: bool | None = None
    in_eval_100: bool = False
    in_sib200: bool = False
    in_babel_imagenet: bool = False


@dataclass(frozen=True)
class OmwFile:
    path: str  # relative to the omw folder
    file_code: str  # from the file name (X for a private-use *)
    header_code: str  # the header line's language field
    lemma_codes: frozenset  # the language tags of lemma lines (empty when untagged)
    script: str | None  # dominant Unicode script of the lemmas


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def read_overrides(path: Path = OVERRIDES_PATH) -> dict[tuple[str, str], dict[str, str]]:
    """The hand decisions by (system, code), each checked against `OVERRIDES_TABLE` (file:line errors)."""
    return {(row["system"], row["code"]): row for _, row in tsv.read_tsv(path, OVERRIDES_TABLE)}


def content_script(lemmas: list[str]) -> str | None:
    """The Unicode script most letters of `lemmas` are written in (None without letters)."""
    import regex

    counts: collections.Counter[str] = collections.Counter()
    patterns = [(code, regex.compile(rf"\p{{Script={code}}}")) for code in CONTENT_SCRIPTS]
    for lemma in lemmas:
        for char in lemma:
            if char.isalpha():
                code = next((code for code, pattern in patterns if pattern.match(char)), None)
                if code:
                    counts[code] += 1
    if not counts:
        return None
    # Japanese kana outweigh Han in Wiktionary entries; both mean the Japanese writing system.
    return max(sorted(counts), key=counts.__getitem__)


def read_tab(path: Path) -> tuple[str, set[str], list[str]]:
    """(header language code, language tags of lemma lines, lemmas) of one OMW `.tab` file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split("\t") if lines else []
    if not lines or not lines[0].startswith("#") or len(header) < 2:
        raise BabelforgeError(f"{path}: first line is not an OMW header")
    tags, lemmas = set(), []
    for line in lines[1:]:
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith("lemma"):
            lemmas.append(parts[2])
            if ":" in parts[1]:
                tags.add(parts[1].rsplit(":", 1)[0])
    return header[1].strip(), tags, lemmas


def tab_file_code(path: Path) -> str:
    """`wn-data-cmn.tab` -> `cmn`, `wn-wikt-Xnah.tab` -> `Xnah`."""
    return path.stem.split("-", 2)[2]


def scan_omw(omw_dir: Path) -> list[OmwFile]:
    files = []
    for path in sorted((omw_dir / "wns").rglob("*.tab")):
        header_code, tags, lemmas = read_tab(path)
        files.append(
            OmwFile(
                path=path.relative_to(omw_dir).as_posix(),
                file_code=tab_file_code(path),
                header_code=header_code,
                lemma_codes=frozenset(tags),
                script=content_script(lemmas),
            )
        )
    return files


def wn_package_languages(omw_dir: Path) -> list[tuple[str, str]]:
    """(language, source file) of every package in OMW's index.toml."""
    index = tomllib.loads((omw_dir / "index.toml").read_text(encoding="utf-8"))
    return sorted(
        (package["language"], package.get("source", ""))
        for package in index.get("packages", {}).values()
        if package.get("language") not in (None, "mul")
    )


def nllb_codes() -> frozenset[str]:
    from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES

    return frozenset(FAIRSEQ_LANGUAGE_CODES)


def langid_codes() -> frozenset[str]:
    from langid.langid import LanguageIdentifier, model

    return frozenset(LanguageIdentifier.from_modelstring(model).nb_classes)


def _langcodes():
    try:
        import langcodes
    except ImportError as error:  # generation-time dependency only
        raise BabelforgeError(
            "build_language_registry needs langcodes and language_data: "
            "pip install -c constraints.txt langcodes language_data"
        ) from error
    return langcodes


def iso639_3_of(code: str) -> str:
    return _langcodes().get(code).to_alpha3()


def likely_script(iso639_3: str) -> str:
    return _langcodes().get(iso639_3).maximize().script or "Latn"


def language_name(key: str, ambiguous: bool) -> str:
    language = _langcodes().get(key[:3] + ("-" + key[4:8] if ambiguous else ""))
    return language.display_name()


def iso639_1_of(iso639_3: str) -> str:
    code = _langcodes().get(iso639_3).language
    return code if len(code) == 2 else ""


def babelnet_key(code: str, sib_by_language: dict[str, list[str]]) -> str:
    """Infer the key of a BabelNet code without an override: its ISO 639-3 code plus the
    Flores-200 script when Flores has exactly one variety of it, else the likely script."""
    iso = iso639_3_of(code.lower()) if len(code) == 2 else code.lower()
    if "_" in code or len(iso) != 3:
        raise BabelforgeError(f"BabelNet code {code} needs a row in {OVERRIDES_PATH.name}")
    candidates = sib_by_language.get(iso, [])
    if len(candidates) == 1:
        return candidates[0]
    if len(candidates) > 1:
        raise BabelforgeError(
            f"BabelNet code {code} matches several Flores-200 codes {candidates}: pick one in {OVERRIDES_PATH.name}"
        )
    return f"{iso}_{likely_script(iso)}"


def build_rows(data: Path, overrides, nllb: frozenset[str], langid: frozenset[str]) -> list[Row]:
    babel = read_tsv(data / "languages" / "babel_imagenet_languages.tsv")
    sib = (data / "languages" / "flores200_sib_codes.txt").read_text(encoding="utf-8").split()
    sib_by_language: dict[str, list[str]] = collections.defaultdict(list)
    for key in sib:
        sib_by_language[key[:3]].append(key)

    rows: dict[str, Row] = {}

    def row_for(key: str) -> Row:
        return rows.setdefault(key, Row(key=key))

    for key in sib:
        row_for(key).in_sib200 = True

    # BabelNet codes of the Babel-ImageNet release.
    for entry in babel:
        code = entry["babelnet_code"]
        override = overrides.get(("babelnet", code))
        key = override["key"] if override else babelnet_key(code, sib_by_language)
        row = row_for(key)
        if row.babelnet:
            raise BabelforgeError(f"BabelNet codes {row.babelnet} and {code} both map to {key}")
        row.babelnet = code
        row.name = entry["name"]
        row.in_babel_imagenet = True
        row.in_eval_100 = entry["in_eval_100"] == "True"
        row.in_xlmr = entry["in_xlmr_93"] == "True"
        if len(code) == 2:
            row.iso639_1 = code.lower()

    # OMW codes: the file name's, the header's and the lemma tags' codes all name the file's language.
    omw_dir = data / "omw"
    key_of_file: dict[str, str] = {}
    for omw_file in scan_omw(omw_dir):
        codes = sorted({omw_file.file_code, omw_file.header_code, *omw_file.lemma_codes})
        pinned = {overrides[("omw", c)]["key"] for c in codes if ("omw", c) in overrides}
        if len(pinned) > 1:
            raise BabelforgeError(f"{omw_file.path}: its codes {codes} are pinned to different keys {pinned}")
        key = pinned.pop() if pinned else omw_key(omw_file, rows)
        key_of_file[omw_file.path] = key
        row_for(key).omw.update(codes)
    # The wn package names a lexicon's language with its own code (often ISO 639-1): same row as
    # the package's source file, or as the ISO 639-1 code when the file is not in the mirror.
    iso639_1_keys = {row.iso639_1: row.key for row in rows.values() if row.iso639_1}
    for language, source in wn_package_languages(omw_dir):
        if ("omw", language) in overrides:
            key = overrides[("omw", language)]["key"]
        else:
            key = key_of_file.get(source) or iso639_1_keys.get(language)
        if key is None:
            raise BabelforgeError(f"wn package language {language} ({source}) matches no registry row")
        row_for(key).omw.add(language)

    # Hand decisions last: they win over everything inferred.
    for (system, code), override in sorted(overrides.items()):
        row = row_for(override["key"])
        if system == "omw":
            row.omw.add(code)
        if override["name"]:
            row.name = override["name"]
        if override["scripts"]:
            row.scripts = tuple(override["scripts"].split(","))
        for column in ("iso639_1", "nllb", "langid"):
            if override[column]:
                setattr(row, column, "" if override[column] == "-" else override[column])
        if override["in_xlmr"]:
            row.in_xlmr = override["in_xlmr"] == "True"
    overridden = {
        column: {o["key"] for o in overrides.values() if o[column]} for column in ("iso639_1", "nllb", "langid")
    }

    # Everything still empty is inferred.
    by_language = collections.Counter(key[:3] for key in rows)
    used_iso639_1 = {row.iso639_1 for row in rows.values() if row.iso639_1}
    for key in sorted(rows):
        row = rows[key]
        script = key[4:8]
        if not row.name:
            row.name = language_name(key, ambiguous=by_language[key[:3]] > 1)
        if not row.scripts:
            row.scripts = EXPANDED_SCRIPTS.get(script, (script,))
        if not row.iso639_1 and key not in overridden["iso639_1"] and "-" not in key:
            candidate = iso639_1_of(key[:3])
            if candidate and candidate not in used_iso639_1:
                row.iso639_1 = candidate
                used_iso639_1.add(candidate)
        if not row.nllb and key not in overridden["nllb"] and key in nllb:
            row.nllb = key
        if not row.langid and key not in overridden["langid"] and row.iso639_1 in langid:
            row.langid = row.iso639_1
        if row.in_xlmr is None:
            row.in_xlmr = row.iso639_1 in XLMR_LANGUAGES
    return [rows[key] for key in sorted(rows)]


def omw_key(omw_file: OmwFile, rows: dict[str, Row]) -> str:
    """The row an OMW code without an override belongs to: same language (ISO 639-3, or the
    macro-language of a BabelNet two-letter code) and the script its lemmas are written in;
    a new row when no such row exists."""
    code = omw_file.header_code
    if not (len(code) == 3 and code.isalpha() and code.islower()):
        raise BabelforgeError(f"{omw_file.path}: OMW code {code!r} needs a row in {OVERRIDES_PATH.name}")
    script = omw_file.script or "Latn"
    candidates = [
        row
        for row in rows.values()
        if row.key[:3] == code or (len(row.babelnet) == 2 and iso639_3_of(row.babelnet.lower()) == code)
    ]

    def same_script(row: Row) -> bool:
        key_script = row.key[4:8]
        return (
            key_script == script
            or (script == "Hani" and key_script in HAN_KEY_SCRIPTS)
            or (key_script == "Jpan" and script in ("Hani", "Hira", "Kana"))
            or (key_script == "Kore" and script in ("Hang", "Hani"))
        )

    matching = sorted((row for row in candidates if same_script(row)), key=lambda r: ("-" in r.key, r.key))
    if matching:
        return matching[0].key
    if candidates:
        # The language is there, in another script: lemmas in a second script of the same language
        # are its business (the scripts column lists what is expected), not a new language.
        return sorted(candidates, key=lambda r: ("-" in r.key, r.key))[0].key
    return f"{code}_{script}"


def render(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_NONE)
    writer.writerow(COLUMNS)
    for row in rows:
        values = {
            "key": row.key,
            "name": row.name,
            "iso639_3": row.key[:3],
            "script": row.key[4:8],
            "scripts": ",".join(row.scripts),
            "iso639_1": row.iso639_1,
            "babelnet": row.babelnet,
            "omw": ",".join(sorted(row.omw)),
            "nllb": row.nllb,
            "langid": row.langid,
            "in_xlmr": row.in_xlmr,
            "in_eval_100": row.in_eval_100,
            "in_sib200": row.in_sib200,
            "in_babel_imagenet": row.in_babel_imagenet,
        }
        for column, value in values.items():
            if isinstance(value, str) and any(ch in value for ch in "\t\n\r"):
                raise BabelforgeError(f"{row.key}: {column} contains a tab or newline")
        writer.writerow([str(values[column]) for column in COLUMNS])
    return out.getvalue()


def build(data: Path = DEFAULT_DATA) -> str:
    """The registry's TSV text, built from `data` and the overrides."""
    rows = build_rows(data, read_overrides(), nllb_codes(), langid_codes())
    return render(rows)


def registry_rows(text: str) -> dict[str, dict[str, str]]:
    """key -> its row, of a registry TSV's text (empty: no rows)."""
    return {row["key"]: row for row in csv.DictReader(io.StringIO(text), delimiter="\t")} if text else {}


def registry_changes(old_text: str, new_text: str) -> list[str]:
    """One line per language the rebuild added, removed or changed, saying what a build can do with
    it: the sense sources that can label it (OMW wordnet, BabelNet code) and whether NLLB translates
    its prompts; a language no source covers gets no labels, whatever the registry says."""
    old, new = registry_rows(old_text), registry_rows(new_text)
    lines = []
    for key in sorted(set(new) - set(old)):
        row = new[key]
        sources = ", ".join(
            [
                *([f"omw:{row['omw']}"] if row["omw"] else []),
                *([f"babelnet {row['babelnet']}"] if row["babelnet"] else []),
            ]
        )
        prompts = f"translated (NLLB {row['nllb']})" if row["nllb"] else "English templates (no NLLB code)"
        scope = (
            "" if row["in_babel_imagenet"] == "True" else "; not a Babel-ImageNet language (in_babel_imagenet False)"
        )
        covered = sources or "none: it gets no labels (no OMW wordnet, no BabelNet code)"
        lines.append(f"added {key} ({row['name']}): sense sources {covered}; prompts {prompts}{scope}")
    lines += [f"removed {key} ({old[key]['name']})" for key in sorted(set(old) - set(new))]
    for key in sorted(set(old) & set(new)):
        changed = [f"{c} {old[key][c]!r} -> {new[key][c]!r}" for c in new[key] if old[key].get(c) != new[key][c]]
        if changed:
            lines.append(f"changed {key}: {'; '.join(changed)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="source mirror (default ../shared/data)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="registry file to write")
    args = parser.parse_args(argv)
    from babelforge.core.io import write_text

    try:
        text = build(args.data)
    except BabelforgeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    before = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
    write_text(text, args.out)
    for line in registry_changes(before, text):
        print(line, file=sys.stderr)
    print(f"{args.out}: {text.count(chr(10)) - 1} languages", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
