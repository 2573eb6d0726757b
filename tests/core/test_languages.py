"""The language registry: coverage of every source's codes, round trips, the paper's rules, errors."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import (
    KEY_PATTERN,
    REGISTRY_PATH,
    Language,
    UnknownLanguageError,
    read_registry,
    registry,
)
from tests.registry import FLAGS, write_registry

REPO = Path(__file__).resolve().parents[2]

# Babel-ImageNet paper: of its 100 evaluation languages these have labels but NLLB-200 cannot
# translate into them, so they get no prompts.
PAPER_NO_NLLB = {"fy", "la", "br", "wuu", "nv", "cv", "diq", "chr", "ce", "hak", "nah"}
# Defects of the original release's nllb_code column (see ../shared/data/README.md).
ORIGINAL_NLLB_DEFECTS = {"KU", "ZH"}


@pytest.fixture(scope="module")
def languages():
    return read_registry(REGISTRY_PATH)


@pytest.fixture(scope="module")
def omw_files(shared_data):
    """(path, file-name code, header code, lemma tag codes, lemmas) of every OMW mirror file."""
    generator = load_generator()
    files = [
        (path, generator.tab_file_code(path), *generator.read_tab(path))
        for path in sorted((shared_data / "omw" / "wns").rglob("*.tab"))
    ]
    assert len(files) > 400
    return files


def write_tsv(path: Path, rows: list[dict[str, str]]) -> Path:
    return write_registry(path, rows, {"scripts": "Latn", **{flag: "False" for flag in FLAGS}})


# --- the file itself -------------------------------------------------------------------------


def test_file_is_sorted_by_key_with_well_formed_unique_keys(languages):
    keys = languages.keys()
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    for language in languages:
        assert KEY_PATTERN.match(language.key), language.key
        assert language.iso639_3 == language.key[:3]
        assert language.script == language.key[4:8]
        assert language.name.strip() == language.name != ""


def test_default_registry_is_the_resource_file(languages):
    assert registry().keys() == languages.keys()


def test_iso639_1_codes_are_two_letters_and_unique(languages):
    codes = [language.iso639_1 for language in languages if language.iso639_1]
    assert all(len(code) == 2 and code.islower() for code in codes)
    assert len(codes) == len(set(codes))


def test_scripts_are_unicode_script_names_consistent_with_the_key(languages):
    import regex

    for language in languages:
        assert language.scripts, language.key
        for script in language.scripts:
            regex.compile(rf"\p{{Script={script}}}")  # raises for a name Unicode does not know
        key_script = {"Jpan": "Hira", "Kore": "Hang", "Hans": "Hani", "Hant": "Hani"}.get(
            language.script, language.script
        )
        assert key_script in language.scripts, language.key


@pytest.mark.slow
def test_nllb_and_langid_codes_exist_in_the_installed_models(languages):
    from langid.langid import LanguageIdentifier, model
    from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES

    langid_codes = set(LanguageIdentifier.from_modelstring(model).nb_classes)
    for language in languages:
        if language.nllb:
            assert language.nllb in FAIRSEQ_LANGUAGE_CODES, language.key
        if language.langid:
            assert language.langid in langid_codes, language.key
    # every Flores-200 key NLLB translates into carries its NLLB code
    for code in FAIRSEQ_LANGUAGE_CODES:
        if code in languages:
            assert languages.get(code).nllb == code


# --- coverage of every source's codes -----------------------------------------------------------


def test_every_babel_imagenet_code_resolves_with_its_flags(languages, babel_languages):
    assert len(babel_languages) == 298
    keys = set()
    for entry in babel_languages:
        language = languages.from_babelnet(entry["babelnet_code"])
        keys.add(language.key)
        assert language.babelnet == entry["babelnet_code"]
        assert language.in_babel_imagenet
        assert language.in_eval_100 == (entry["in_eval_100"] == "True"), language.key
        assert language.in_xlmr == (entry["in_xlmr_93"] == "True"), language.key
    assert len(keys) == 298
    assert sum(language.in_babel_imagenet for language in languages) == 298
    assert sum(language.in_eval_100 for language in languages) == 100


def test_babelnet_lookup_is_case_insensitive(languages):
    assert languages.from_babelnet("zh_min_nan") == languages.from_babelnet("ZH_MIN_NAN")


def test_every_sib200_code_is_a_key(languages, sib_codes):
    assert len(sib_codes) == 205
    for code in sib_codes:
        assert languages.get(code).in_sib200
    assert {language.key for language in languages if language.in_sib200} == set(sib_codes)


def test_every_omw_code_of_a_file_names_one_language(languages, omw_files):
    for path, file_code, header_code, tags, _ in omw_files:
        keys = {languages.from_omw(code).key for code in {file_code, header_code, *tags}}
        assert len(keys) == 1, f"{path}: codes map to {keys}"
        # private codes: OMW writes `*xxx` in headers and `Xxxx` in file names
        if header_code.startswith("*"):
            assert languages.from_omw("X" + header_code[1:]).key in keys


def test_wn_package_languages_resolve_like_their_source_files(languages, shared_data):
    index = tomllib.loads((shared_data / "omw" / "index.toml").read_text(encoding="utf-8"))
    for name, package in index["packages"].items():
        if package.get("language", "mul") == "mul":
            continue
        language = languages.from_omw(package["language"])
        source = shared_data / "omw" / package.get("source", "")
        if package.get("source") and source.is_file():
            header_code = source.read_text(encoding="utf-8").split("\n", 1)[0].split("\t")[1]
            assert languages.from_omw(header_code) == language, name


def test_omw_lemmas_are_written_in_the_expected_scripts(languages, omw_files):
    import regex

    letter = regex.compile(r"\p{L}")
    for path, _, header_code, _, lemmas in omw_files:
        language = languages.from_omw(header_code)
        expected = regex.compile("|".join(rf"\p{{Script={script}}}" for script in language.scripts))
        letters = [char for lemma in lemmas for char in lemma if letter.match(char)]
        if len(letters) < 20:
            continue
        share = sum(bool(expected.match(char)) for char in letters) / len(letters)
        assert share >= 0.5, f"{path}: only {share:.0%} of letters in {language.scripts} ({language.key})"


# --- round trips ------------------------------------------------------------------------------


def test_round_trips_through_every_code_system(languages):
    for language in languages:
        assert languages.get(language.key) is language
        if language.babelnet:
            assert languages.from_babelnet(language.babelnet) is language
        if language.iso639_1:
            assert languages.lookup(language.iso639_1, "iso639_1") is language
        for code in language.omw:
            assert languages.from_omw(code) is language
        if language.nllb:
            # a shared NLLB code (KU and KMR both translate as kmr_Latn) leads to one canonical row
            target = languages.from_nllb(language.nllb)
            assert target.nllb == language.nllb
            if language.nllb == language.key:
                assert target is language
        if language.langid:
            assert languages.lookup(language.langid, "langid").langid == language.langid


def test_lookup_by_each_system_returns_language_objects(languages):
    german = languages.get("deu_Latn")
    assert isinstance(german, Language)
    assert (german.babelnet, german.iso639_1, german.nllb, german.langid) == ("DE", "de", "deu_Latn", "de")
    assert "deu" in german.omw
    assert languages.lookup("DE", "babelnet") is languages.lookup("deu", "omw") is german


# --- the paper's rules ------------------------------------------------------------------------


def test_norwegian_is_bokmal(languages):
    norwegian = languages.from_babelnet("NO")
    assert norwegian.key == "nob_Latn"
    assert languages.lookup("no", "iso639_1") is norwegian
    assert languages.from_omw("nob") is languages.from_omw("nb") is norwegian
    assert languages.from_babelnet("NN").key == "nno_Latn"


def test_azerbaijani_is_north_azerbaijani(languages):
    azerbaijani = languages.from_babelnet("AZ")
    assert azerbaijani.key == "azj_Latn" == azerbaijani.nllb
    assert languages.lookup("az", "iso639_1") is azerbaijani
    assert languages.from_babelnet("AZB").key == "azb_Arab"


def test_kurdish_is_latin_kurmanji_not_sorani(languages):
    kurdish = languages.from_babelnet("KU")
    assert kurdish.script == "Latn" and kurdish.scripts == ("Latn",)
    assert kurdish.nllb == "kmr_Latn"
    assert languages.from_babelnet("KMR").key == "kmr_Latn"
    assert languages.from_babelnet("KMR").nllb == "kmr_Latn"
    assert kurdish.key != "kmr_Latn"  # two BabelNet codes, two keys
    assert languages.from_babelnet("CKB").key == "ckb_Arab"
    assert languages.from_nllb("ckb_Arab").babelnet == "CKB"


def test_chinese_keeps_simplified_and_traditional_apart(languages):
    simplified, traditional = languages.get("zho_Hans"), languages.get("zho_Hant")
    assert simplified is not traditional
    assert (simplified.nllb, traditional.nllb) == ("zho_Hans", "zho_Hant")
    assert languages.from_babelnet("ZH") is simplified
    assert languages.from_omw("cmn") is simplified
    assert languages.from_omw("qcn") is traditional
    assert languages.from_omw("cmn-Hant") is traditional
    assert languages.from_babelnet("ZH_YUE").key == "yue_Hant"


def test_original_release_nllb_codes_are_kept_except_its_known_defects(languages, babel_languages):
    differing = {
        entry["babelnet_code"]
        for entry in babel_languages
        if entry["nllb_code"] and languages.from_babelnet(entry["babelnet_code"]).nllb != entry["nllb_code"]
    }
    assert differing == ORIGINAL_NLLB_DEFECTS


def test_languages_nllb_cannot_translate_are_the_papers(languages):
    without_nllb = {
        language.iso639_1 or language.babelnet.lower()
        for language in languages
        if language.in_eval_100 and not language.nllb
    }
    assert without_nllb == PAPER_NO_NLLB


def test_colliding_wikipedia_editions_get_variant_keys(languages):
    assert languages.from_babelnet("SIMPLE").key == "eng_Latn-simple"
    assert languages.from_babelnet("BE_X_OLD").key == "bel_Cyrl-tarask"
    assert languages.from_babelnet("EN").key == "eng_Latn"
    assert languages.from_babelnet("BE").key == "bel_Cyrl"
    # the language stays identifiable for langid, which has one English and one Belarusian
    assert languages.from_babelnet("SIMPLE").langid == "en"


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("system", ["key", "babelnet", "iso639_1", "omw", "nllb", "langid"])
def test_unknown_code_names_code_and_system(languages, system):
    with pytest.raises(UnknownLanguageError) as caught:
        languages.lookup("qqq_Zzzz", system)
    assert isinstance(caught.value, BabelforgeError)
    assert "'qqq_Zzzz'" in str(caught.value) and system in str(caught.value)
    assert (caught.value.code, caught.value.system) == ("qqq_Zzzz", system)


def test_unknown_code_system_is_an_error(languages):
    with pytest.raises(BabelforgeError, match="unknown code system 'glottolog'"):
        languages.lookup("stan1295", "glottolog")


def test_hand_written_registry_reads(tmp_path):
    path = write_tsv(
        tmp_path / "languages.tsv",
        [
            {"key": "deu_Latn", "name": "German", "babelnet": "DE", "omw": "deu,de", "nllb": "deu_Latn"},
            {"key": "eng_Latn", "name": "English", "iso639_1": "en", "in_xlmr": "True"},
        ],
    )
    languages = read_registry(path)
    assert len(languages) == 2
    assert languages.from_omw("de").key == "deu_Latn"
    assert languages.get("eng_Latn").in_xlmr is True
    assert languages.get("eng_Latn").babelnet is None


@pytest.mark.parametrize(
    "column, first, second",
    [
        ("key", "deu_Latn", "deu_Latn"),
        ("babelnet", "DE", "DE"),
        ("iso639_1", "de", "de"),
        ("omw", "deu", "gsw,deu"),
    ],
)
def test_duplicate_codes_in_a_hand_written_registry_raise(tmp_path, column, first, second):
    rows = [{"key": "deu_Latn", "name": "German"}, {"key": "gsw_Latn", "name": "Alemannic"}]
    rows[0][column], rows[1][column] = first, second
    code = second.split(",")[-1]
    with pytest.raises(BabelforgeError, match=code):
        read_registry(write_tsv(tmp_path / "languages.tsv", rows))


@pytest.mark.parametrize("key", ["de", "deu_latn", "deu-Latn", "deu_Latn_x", "deu_Latn-", "DEU_Latn"])
def test_malformed_keys_raise(tmp_path, key):
    with pytest.raises(BabelforgeError, match="xxx_Scrp"):
        read_registry(write_tsv(tmp_path / "languages.tsv", [{"key": key, "name": "x"}]))


def test_missing_column_and_bad_flag_raise(tmp_path):
    path = tmp_path / "languages.tsv"
    path.write_text("key\tname\ndeu_Latn\tGerman\n", encoding="utf-8")
    with pytest.raises(
        BabelforgeError, match=r"languages.tsv:1: header is 'key\\tname', expected 'key\\tname\\tiso639_3"
    ):
        read_registry(path)
    with pytest.raises(BabelforgeError, match="True or False"):
        read_registry(write_tsv(path, [{"key": "deu_Latn", "name": "German", "in_xlmr": "yes"}]))


GOOD_ROW = "zzz_Latn\tTest\tzzz\tLatn\tLatn\t\t\t\t\t\tFalse\tFalse\tFalse\tFalse"
MALFORMED_ROWS = {
    "a field too many": (GOOD_ROW + "\textra", "15 fields, expected 14 separated by tabs"),
    "fields missing": ("zzz_Latn\tTest", "2 fields, expected 14"),
    "empty name": (GOOD_ROW.replace("\tTest\t", "\t\t"), "empty name; every row needs one"),
    "a flag not a boolean": (GOOD_ROW[: -len("False")] + "yes", "in_babel_imagenet 'yes' is not True or False"),
    "a bad script list": (GOOD_ROW.replace("\tLatn\tLatn\t", "\tLatn\tLatin\t"), "scripts 'Latin' is not a comma list"),
    "a key twice": (REGISTRY_PATH.read_text(encoding="utf-8").splitlines()[1], "appears twice (first on line 2)"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_ROWS))
def test_a_malformed_extra_row_in_the_real_registry_is_refused_naming_its_line(tmp_path, case):
    # Such a row used to load silently (extra fields dropped) or crash with an AttributeError.
    row, message = MALFORMED_ROWS[case]
    text = REGISTRY_PATH.read_text(encoding="utf-8")
    path = tmp_path / "languages.tsv"
    path.write_text(text + row + "\n", encoding="utf-8")
    line = len(text.splitlines()) + 1
    with pytest.raises(BabelforgeError) as error:
        read_registry(path)
    assert str(error.value).startswith(f"{path}:{line}: ") and message in str(error.value)
    path.write_text(text + GOOD_ROW + "\n", encoding="utf-8")
    assert "zzz_Latn" in read_registry(path)  # the well-formed row loads


# --- the generator ----------------------------------------------------------------------------


def load_generator():
    """scripts/ is not a package: load the generator from its file (once)."""
    name = "build_language_registry"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the file runs
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.mark.slow
def test_registry_file_is_the_generators_output(shared_data, tmp_path):
    pytest.importorskip("langcodes", reason="the generator needs langcodes (pip install langcodes language_data)")
    generator = load_generator()
    out = tmp_path / "languages.tsv"
    assert generator.main(["--data", str(shared_data), "--out", str(out)]) == 0
    assert out.read_bytes() == REGISTRY_PATH.read_bytes(), (
        "resources/languages.tsv is stale: run python scripts/build_language_registry.py"
    )


def test_every_override_is_used_and_wins(languages):
    generator = load_generator()
    overrides = generator.read_overrides()
    for (system, code), override in overrides.items():
        language = languages.get(override["key"])
        if system == "babelnet":
            assert language.babelnet == code
        elif system == "omw":
            assert code in language.omw
        for column in ("name", "nllb", "langid", "iso639_1"):
            value = override[column]
            if value:
                assert (getattr(language, column) or "-") == value, (code, column)
        if override["scripts"]:
            assert ",".join(language.scripts) == override["scripts"]


def test_malformed_or_duplicate_overrides_raise(tmp_path):
    generator = load_generator()
    header = "\t".join(generator.OVERRIDE_COLUMNS)
    short = tmp_path / "short.tsv"
    short.write_text(header + "\nbabelnet\tNO\tnob_Latn\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match="short.tsv:2: 3 fields, expected 10 separated by tabs"):
        generator.read_overrides(short)
    twice = tmp_path / "twice.tsv"
    row = "babelnet\tNO\tnob_Latn" + "\t" * 6 + "\tbecause"
    twice.write_text(f"{header}\n{row}\n{row}\n", encoding="utf-8")
    with pytest.raises(BabelforgeError, match="appears twice"):
        generator.read_overrides(twice)


@pytest.mark.parametrize(
    "code, key",
    [
        ("deu_Latn", "deu_Latn"),
        ("de", "deu_Latn"),
        ("DE", "deu_Latn"),
        ("deu", "deu_Latn"),
        (" de ", "deu_Latn"),
        ("jp", "jpn_Jpan"),
        ("ja", "jpn_Jpan"),
    ],
)
def test_every_command_resolves_a_language_however_it_is_named(code, key):
    from babelforge.core.languages import registry

    assert registry().resolve(code).key == key


@pytest.mark.parametrize(
    "code, message",
    [
        ("deu_latn", r"unknown language 'deu_latn'; did you mean deu_Latn\b"),
        ("german", r"unknown language 'german'; did you mean deu_Latn\?"),
        ("zho", r"language 'zho' is written in several scripts here: give one of zho_Hans, zho_Hant"),
        ("qqq", r"unknown language 'qqq'; give a registry key"),
    ],
)
def test_an_unknown_language_names_the_nearest_keys(code, message):
    from babelforge.core.languages import registry

    with pytest.raises(BabelforgeError, match=message):
        registry().resolve(code)


def test_the_registry_rebuild_says_what_a_build_can_do_with_each_added_language():
    changes = load_generator().registry_changes
    text = REGISTRY_PATH.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    header, rows = lines[0], {line.split("\t", 1)[0]: line for line in lines[1:]}
    without = header + "".join(line for key, line in rows.items() if key not in ("als_Latn", "fil_Latn"))
    renamed = without.replace(rows["fin_Latn"], rows["fin_Latn"].replace("\tFinnish\t", "\tSuomi\t", 1))
    assert changes(renamed, text) == [
        "added als_Latn (Albanian): sense sources omw:als,sq, babelnet SQ; prompts translated (NLLB als_Latn)",
        "added fil_Latn (Filipino): sense sources none: it gets no labels (no OMW wordnet, no BabelNet code); "
        "prompts English templates (no NLLB code); not a Babel-ImageNet language (in_babel_imagenet False)",
        "changed fin_Latn: name 'Suomi' -> 'Finnish'",
    ]
    assert changes(text, without) == ["removed als_Latn (Albanian)", "removed fil_Latn (Filipino)"]
    assert changes(text, text) == [] and len(changes("", text)) == len(rows)
