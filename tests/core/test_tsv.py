"""The strict TSV reader of the resource tables, and every real `resources/*.tsv` passing it."""

from __future__ import annotations

import pytest

from babelforge.babel_imagenet.confusables import read_lookalikes
from babelforge.core import imagenet, languages, sources
from babelforge.core.errors import BabelforgeError
from babelforge.core.tsv import INTEGER, SHA256, TsvSpec, one_of, read_tsv, tsv_rows
from babelforge.lexicon import wordnet
from babelforge.mvl_sib.images import manifest_table
from tests.core.test_languages import load_generator

SPEC = TsvSpec(
    ("system", "code", "count", "note"),
    required=("system", "code"),
    unique=(("system", "code"),),
    checks={"system": one_of("a", "b"), "count": INTEGER},
)
HEADER = "system\tcode\tcount\tnote\n"


def rows(text: str, spec: TsvSpec = SPEC):
    return tsv_rows(text, spec, "t.tsv")


def refusal(text: str, spec: TsvSpec = SPEC) -> str:
    with pytest.raises(BabelforgeError) as error:
        rows(text, spec)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_rows_come_back_as_written_with_their_line_numbers():
    text = "\ufeff" + HEADER + 'a\tx\t3\t "quoted" \n\nb\tx\t\t\r\n'
    assert rows(text) == [
        (2, {"system": "a", "code": "x", "count": "3", "note": ' "quoted" '}),
        (4, {"system": "b", "code": "x", "count": "", "note": ""}),  # a blank line is skipped, not renumbered
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "system\tcode\tcount\n",
            "t.tsv:1: header is 'system\\tcode\\tcount', expected 'system\\tcode\\tcount\\tnote'",
        ),
        ("", "t.tsv:1: header is ''"),
        (HEADER + "a\tx\t1\t\n" + "b\tx\t1\tnote\textra\n", "t.tsv:3: 5 fields, expected 4 separated by tabs"),
        (HEADER + "a\tx\n", "t.tsv:2: 2 fields, expected 4"),
        (HEADER + "a\t \t1\t\n", "t.tsv:2: empty code; every row needs one"),
        (HEADER + "c\tx\t1\t\n", "t.tsv:2: system 'c' is not one of a, b"),
        (HEADER + "a\tx\tten\t\n", "t.tsv:2: count 'ten' is not a whole number"),
        (HEADER + "a\tx\t1\t\nb\tx\t1\t\na\tx\t2\t\n", "t.tsv:4: system code 'a x' appears twice (first on line 2)"),
    ],
    ids=["short header", "empty file", "extra field", "missing fields", "empty key", "not one of", "type", "dup"],
)
def test_a_malformed_table_is_one_line_naming_file_and_line(text, message):
    assert message in refusal(text)


def test_the_leftmost_problem_of_a_row_is_named():
    assert "system 'c'" in refusal(HEADER + "c\t\tten\t\n")


def test_a_table_without_header_and_a_quoted_one():
    bare = TsvSpec(("number", "name"), required=("number",), checks={"number": INTEGER}, header=False)
    assert rows("00\tadj.all\n01\tadj.pert\n", bare) == [
        (1, {"number": "00", "name": "adj.all"}),
        (2, {"number": "01", "name": "adj.pert"}),
    ]
    assert "t.tsv:2: number 'x'" in refusal("00\ta\nx\tb\n", bare)
    quoted = TsvSpec(("id", "text"), quoted=True)
    assert rows('id\ttext\n1\t"a\tb ""c"""\n', quoted) == [(2, {"id": "1", "text": 'a\tb "c"'})]
    assert "t.tsv:2: not a readable TSV row" in refusal('id\ttext\n1\t"a" b\n', quoted)


def test_a_missing_or_undecodable_file_is_named(tmp_path):
    with pytest.raises(BabelforgeError, match=r"none.tsv: no such file"):
        read_tsv(tmp_path / "none.tsv", SPEC)
    path = tmp_path / "latin1.tsv"
    path.write_bytes(HEADER.encode() + "a\tx\t1\tStraße\n".encode("latin-1"))
    with pytest.raises(BabelforgeError, match=r"latin1.tsv:2: not UTF-8 text"):
        read_tsv(path, SPEC)


def test_sha256_values():
    assert SHA256.test("0" * 64) and not SHA256.test("0" * 63) and not SHA256.test("A" * 64)


# --- the real tables -----------------------------------------------------------------------------


def test_every_real_resource_table_passes_its_reader(repo_root):
    readers = {
        "languages.tsv": lambda path: len(languages.read_registry(path)) > 500,
        "language_overrides.tsv": lambda path: len(load_generator().read_overrides(path)) > 50,
        "sources.tsv": lambda path: "omw" in sources.read_sources(path),
        "imagenet1k_classes.tsv": lambda path: len(imagenet.read_imagenet_classes(path)) == 1000,
        # the full profile's image manifest is shipped as its header only, until it is curated
        "mvl_sib_images.tsv": lambda path: read_tsv(path, manifest_table()) == [],
        "wordnet_lexnames.tsv": lambda path: wordnet.check_lexnames(path) is None,
        "confusables.tsv": lambda path: len(read_lookalikes(path)) > 100,
    }
    tables = sorted(path.name for path in (repo_root / "resources").glob("*.tsv"))
    assert tables == sorted(readers), "a new resources/*.tsv needs a strict reader (babelforge.core.tsv)"
    for name in tables:
        assert readers[name](repo_root / "resources" / name), name


def test_every_source_file_list_passes(repo_root):
    for path in sorted((repo_root / "resources" / "source_files").glob("*.tsv")):
        assert read_tsv(path, sources.FILE_LIST), path.name


def edited_copy(repo_root, tmp_path, name: str, edit) -> tuple:
    """A copy of resources/<name> with `edit(lines)` applied; (path, number of the last line)."""
    lines = (repo_root / "resources" / name).read_text(encoding="utf-8").splitlines()
    lines = edit(lines)
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(lines)


def test_bad_rows_in_the_other_real_tables_are_refused_naming_the_line(repo_root, tmp_path):
    path, last = edited_copy(repo_root, tmp_path, "imagenet1k_classes.tsv", lambda lines: [*lines, lines[1]])
    with pytest.raises(BabelforgeError, match=rf"imagenet1k_classes.tsv:{last}: class_idx '0' appears twice"):
        imagenet.read_imagenet_classes(path)
    path, _ = edited_copy(repo_root, tmp_path, "imagenet1k_classes.tsv", lambda lines: [lines[0], "0\ttench\ttench"])
    with pytest.raises(BabelforgeError, match=r"imagenet1k_classes.tsv:2: wnid 'tench' is not a wnid"):
        imagenet.read_imagenet_classes(path)
    path, _ = edited_copy(repo_root, tmp_path, "imagenet1k_classes.tsv", lambda lines: [lines[0], lines[2]])
    with pytest.raises(BabelforgeError, match=r"imagenet1k_classes.tsv:2: class_idx 1, expected 0"):
        imagenet.read_imagenet_classes(path)

    path, last = edited_copy(repo_root, tmp_path, "wordnet_lexnames.tsv", lambda lines: [*lines, "45\tnoun.extra"])
    with pytest.raises(BabelforgeError, match=rf"wordnet_lexnames.tsv:{last}: 2 fields, expected 3"):
        wordnet.check_lexnames(path)
    path, _ = edited_copy(repo_root, tmp_path, "wordnet_lexnames.tsv", lambda lines: lines[1:])
    with pytest.raises(BabelforgeError, match=r"wordnet_lexnames.tsv:1: file number 01, expected 00"):
        wordnet.check_lexnames(path)

    path, last = edited_copy(repo_root, tmp_path, "language_overrides.tsv", lambda lines: [*lines, "babelnet\tXX"])
    with pytest.raises(BabelforgeError, match=rf"language_overrides.tsv:{last}: 2 fields, expected 10"):
        load_generator().read_overrides(path)


def test_bad_rows_in_the_source_registry_are_refused_naming_the_line(repo_root, tmp_path):
    (tmp_path / "source_files").symlink_to(repo_root / "resources" / "source_files")

    def refused(edit) -> str:
        path, _ = edited_copy(repo_root, tmp_path, "sources.tsv", edit)
        with pytest.raises(BabelforgeError) as error:
            sources.read_sources(path)
        return str(error.value)

    def cells(line: str, column: str, value: str) -> str:
        fields = line.split("\t")
        fields[sources.COLUMNS.index(column)] = value
        return "\t".join(fields)

    assert "sources.tsv:2: kind 'folder' is not one of file, dir" in refused(
        lambda lines: [lines[0], cells(lines[1], "kind", "folder"), *lines[2:]]
    )
    assert "sources.tsv:3: empty licence" in refused(
        lambda lines: [*lines[:2], cells(lines[2], "licence", ""), *lines[3:]]
    )
    assert "sources.tsv:2: sha256 'abc' is not a sha256" in refused(
        lambda lines: [lines[0], cells(lines[1], "sha256", "abc"), *lines[2:]]
    )
    assert "appears twice (first on line 2)" in refused(lambda lines: [*lines, lines[1]])


@pytest.mark.parametrize(
    "value, message",
    [
        ("Deutsch\u2028x", "t.tsv:2: note 'Deutsch\\u2028x' holds a line break (U+2028)"),
        ("Deutsch\x1b[2J", "t.tsv:2: note 'Deutsch\\x1b[2J' holds the control character U+001B"),
        ("Deutsch\u202e", "t.tsv:2: note 'Deutsch\\u202e' holds the bidirectional control U+202E"),
        ("Deu\u200dtsch", "t.tsv:2: note 'Deu\\u200dtsch' holds a zero-width joiner (U+200D) outside a script"),
        ("Deu\u200btsch", "t.tsv:2: note 'Deu\\u200btsch' holds the invisible or private-use character U+200B"),
        ("x" * 501, f"t.tsv:2: note '{'x' * 40}…' has 501 characters; at most 500"),
        ("Deutsch\rb\tx\t1", "t.tsv:2: a carriage return (U+000D) inside a row"),
    ],
    ids=["U+2028", "control", "bidi", "joiner", "zero-width space", "500 characters", "lone CR"],
)
def test_a_hand_written_field_is_one_value(value, message):
    assert refusal(HEADER + f"a\tx\t1\t{value}\n").startswith(message)


def test_a_joiner_a_script_spells_with_stays_and_a_quoted_table_keeps_its_tabs():
    persian = "زبان\u200cها"  # the non-joiner is Persian spelling
    assert rows(HEADER + f"a\tx\t1\t{persian}\n")[0][1]["note"] == persian
    assert rows('id\ttext\n1\t"a\tb"\n', TsvSpec(("id", "text"), quoted=True))[0][1]["text"] == "a\tb"


def test_an_invisible_character_in_the_real_registry_or_overrides_is_refused(repo_root, tmp_path):
    def with_name(line: str, column: int, value: str) -> str:
        fields = line.split("\t")
        fields[column] = value
        return "\t".join(fields)

    path, _ = edited_copy(repo_root, tmp_path, "languages.tsv", lambda ls: [ls[0], with_name(ls[1], 1, "Ab\u202ekhaz")])
    with pytest.raises(BabelforgeError, match=r"languages.tsv:2: name 'Ab\\u202ekhaz' holds the bidirectional control"):
        languages.read_registry(path)
    path, _ = edited_copy(
        repo_root, tmp_path, "language_overrides.tsv", lambda ls: [ls[0], with_name(ls[1], 9, "paper\u2028x"), *ls[2:]]
    )
    with pytest.raises(BabelforgeError, match=r"language_overrides.tsv:2: reason 'paper\\u2028x' holds a line break"):
        load_generator().read_overrides(path)


def test_a_derived_tables_notes_are_skipped_and_its_line_numbers_kept():

    spec = TsvSpec(columns=("a", "b"), comments=True)
    text = "# derived from x\n# do not edit\na\tb\n# a note\n1\t2\n"
    assert tsv_rows(text, spec, "t.tsv") == [(5, {"a": "1", "b": "2"})]
    with pytest.raises(BabelforgeError, match=r"t.tsv:1: header is '# derived from x'"):
        tsv_rows(text, TsvSpec(columns=("a", "b")), "t.tsv")
