"""One rule for every reader of `resources/languages.tsv`: `registry()`, `read_registry`, the view
writer (`language_view`) and the views refuse the same registries, in one line naming the file's
line (issue 46: the views were written from a registry with a key twice or a bidi control that
`registry()` refused)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.cli import main as cli
from babelforge.core.errors import BabelforgeError
from babelforge.core.languages import COLUMNS, REGISTRY_PATH, read_registry, registry_of_text, view_text

REGISTRY_TEXT = REGISTRY_PATH.read_text(encoding="utf-8")
LINES = REGISTRY_TEXT.splitlines(keepends=True)
DEU = next(index for index, line in enumerate(LINES) if line.startswith("deu_Latn\t"))
NLLB = COLUMNS.index("nllb")


def with_nllb(line: str, value: str) -> str:
    fields = line.rstrip("\n").split("\t")
    fields[NLLB] = value
    return "\t".join(fields) + "\n"


BROKEN = {
    "duplicate-row": (
        LINES + [LINES[DEU]],
        f"{len(LINES) + 1}: key 'deu_Latn' appears twice (first on line {DEU + 1})",
    ),
    "rlo-in-nllb": (
        LINES[:DEU] + [with_nllb(LINES[DEU], "deu_\u202eLatn")] + LINES[DEU + 1 :],
        f"{DEU + 1}: nllb 'deu_\\u202eLatn' holds the bidirectional control U+202E",
    ),
    # a code system's code on a second row (found by the property test below: the line named no file)
    "babelnet-code-twice": (
        LINES[: DEU + 1] + [LINES[DEU].replace("deu_Latn\t", "deu_Latn-x\t", 1)] + LINES[DEU + 1 :],
        f"{DEU + 2}: babelnet code DE is on both deu_Latn and deu_Latn-x",
    ),
    "rlm-in-nllb": (
        LINES[:DEU] + [with_nllb(LINES[DEU], "deu_Latn\u200f")] + LINES[DEU + 1 :],
        f"{DEU + 1}: nllb 'deu_Latn\\u200f' holds the bidirectional control U+200F",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_registry_its_reader_and_the_view_writer_refuse_the_same_line(tmp_path, case):
    lines, message = BROKEN[case]
    text = "".join(lines)
    path = tmp_path / "languages.tsv"
    path.write_text(text, encoding="utf-8")
    for read in (lambda: read_registry(path), lambda: view_text(text, ["deu_Latn"], str(path))):
        with pytest.raises(BabelforgeError) as error:
            read()
        assert str(error.value).startswith(f"{path}:{message}")
        assert "\n" not in str(error.value)


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_language_view_writes_no_view_from_a_registry_the_stages_refuse(tmp_path, monkeypatch, capsys, case):
    """The command as DVC runs it, in a project whose own registry is broken: one line, no view."""
    project = tmp_path / "project"
    (project / "resources").mkdir(parents=True)
    (project / "resources" / "languages.tsv").write_text("".join(BROKEN[case][0]), encoding="utf-8")
    (project / "dvc.yaml").write_text("stages: {}\n", encoding="utf-8")
    (project / "params.yaml").write_text("profile: sample\npaths:\n  language_views: views\n", encoding="utf-8")
    monkeypatch.chdir(project)
    monkeypatch.setattr("babelforge.pipeline.language_view_stage.REGISTRY_PATH", project / "resources/languages.tsv")
    monkeypatch.setattr("babelforge.pipeline.language_view_stage.view_keys", lambda name, params: ([], {"deu_Latn"}))
    assert cli(["language_view", "babel-imagenet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("babelforge language_view: error: ") and BROKEN[case][1].split(": ", 1)[1] in err
    assert len(err.splitlines()) == 1 and not (project / "views").exists()


# --- fuzz: any edit of the registry is read or refused in one line, by every reader alike

CHARACTERS = st.sampled_from(
    [
        "\u202e",
        "\u200f",
        "\u2066",
        "\u200b",
        "\u2028",
        "\x00",
        "\x1b",
        "\r",
        "\n",
        "\t",
        "\ufeff",
        "a",
        "Z",
        "_",
        ",",
        " ",
    ]
) | st.characters(exclude_categories=["Cs"])  # a lone surrogate is no text a file can hold


@st.composite
def edited_registries(draw) -> str:
    """The real registry with a few random edits: a row repeated or dropped, a character put in or taken out."""
    lines = list(LINES)
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(1, len(lines) - 1))
        edit = draw(st.sampled_from(["repeat", "drop", "insert", "delete", "field"]))
        line = lines[index]
        if edit == "repeat":
            lines.insert(draw(st.integers(1, len(lines))), line)
        elif edit == "drop" and len(lines) > 2:
            del lines[index]
        elif edit == "insert":
            at = draw(st.integers(0, len(line)))
            lines[index] = line[:at] + draw(CHARACTERS) + line[at:]
        elif edit == "delete" and len(line) > 1:
            at = draw(st.integers(0, len(line) - 2))
            lines[index] = line[:at] + line[at + 1 :]
        else:
            fields = line.rstrip("\n").split("\t")
            column = draw(st.integers(0, len(fields) - 1))
            fields[column] = draw(st.text(CHARACTERS, max_size=12))
            lines[index] = "\t".join(fields) + "\n"
    return "".join(lines)


@settings(max_examples=200, deadline=5000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edited_registries())
def test_any_edited_registry_is_read_or_refused_alike_by_every_reader(tmp_path, text):
    path = tmp_path / "languages.tsv"
    path.write_text(text, encoding="utf-8", newline="")

    def outcome(read):
        try:
            return read()
        except BabelforgeError as error:
            assert "\n" not in str(error) and str(error).startswith(f"{path}")
            return str(error)

    from_file = outcome(lambda: read_registry(path))
    from_text = outcome(lambda: registry_of_text(text, str(path)))
    refused = isinstance(from_text, str)
    assert isinstance(from_file, str) == refused
    # ask the view for languages the edited registry still holds: a dropped row is the view's own refusal
    keys = ["eng_Latn"] if refused else [language.key for language in from_text][:5]
    from_view = outcome(lambda: view_text(text, keys, str(path)))
    if refused:
        assert from_view == from_text  # the view writer's verdict is the registry's, word for word
    else:  # a view written from an accepted registry reads back as the same rows
        view = tmp_path / "view.tsv"
        view.write_text(from_view, encoding="utf-8")
        assert [language.key for language in read_registry(view)] == keys
