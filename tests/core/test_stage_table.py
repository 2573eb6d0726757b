"""The command table read from the source (babelforge.core.stage_table): what a declaration's literals
give, the pipeline order, which modules are commands, and the one-line refusals of a table that cannot be
right."""

from __future__ import annotations

import sys
import textwrap

import pytest

import babelforge.core.stage_table as stage_table
import babelforge.core.stages as stages
from babelforge.core.errors import BabelforgeError
from babelforge.core.stage_table import Entry, _entry, _pipeline_order, table, view_deps
from tests.imports import REPO


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """An importable package `plantpkg` whose `*_stage.py` files are the whole table (fresh caches for it;
    the project's table comes back after the test)."""
    package = tmp_path / "plantpkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(stage_table, "package_folders", lambda: [(package, "plantpkg")])
    stage_table.table.cache_clear()
    yield package
    stage_table.table.cache_clear()
    for name in [name for name in sys.modules if name.startswith("plantpkg")]:
        del sys.modules[name]


def plant(package, name, text):
    (package / f"{name}_stage.py").write_text(textwrap.dedent(text), encoding="utf-8")


def test_a_literal_declaration_gives_its_reads_views_and_writes(tmp_path):
    path = tmp_path / "toy_stage.py"
    path.write_text(
        'STAGE = Stage(name="toy", help="h", run=run, deps=["a"], languages=("mvl-sib",), outs=("o",), '
        'metrics=("m.json",))\n',
        encoding="utf-8",
    )
    entry = _entry(path, "pkg.toy_stage")
    # the views follow the deps by the one rule Stage.dvc_deps uses; every dep literal: not computed
    assert entry.reads == ("a", *view_deps(["mvl-sib"])) == ("a", "${paths.language_views}/mvl-sib.tsv")
    assert entry.reads_computed is False
    assert entry.writes == ("o", "m.json") and entry.kind == "stage" and entry.owned_paths == ()


def test_a_file_without_a_declaration_is_no_command(tmp_path):
    path = tmp_path / "other_stage.py"
    path.write_text('STAGE = make_stage("x")\nOTHER = Stage("y", "h", run, tool=True)\n', encoding="utf-8")
    with pytest.raises(BabelforgeError, match=r"other_stage\.py: declares no command \(STAGE = Stage"):
        _entry(path, "pkg.other_stage")


def test_two_commands_of_one_name_are_refused_naming_both_modules(planted):
    plant(planted, "a", 'STAGE = Stage("same", "h", run, tool=True)\n')
    plant(planted, "b", 'STAGE = Stage("same", "h", run, tool=True)\n')
    with pytest.raises(BabelforgeError, match=r"^two commands named same: plantpkg\.a_stage and plantpkg\.b_stage$"):
        stage_table.table()


def test_load_imports_the_declaration_and_refuses_one_renamed_after_the_table_read_it(planted):
    header = "from babelforge.core.stages import Stage\n\n\ndef run(args):\n    return 0\n\n\n"
    plant(planted, "good", header + 'STAGE = Stage("good", "h", run, tool=True)\n')
    plant(
        planted,
        "renamed",
        header + 'STAGE = Stage("first", "h", run, tool=True)\nSTAGE = Stage("later", "h", run, tool=True)\n',
    )
    assert list(stage_table.table()) == ["first", "good"]  # tools, by name
    assert stages.load("good").name == "good"
    with pytest.raises(
        BabelforgeError, match=r"^plantpkg\.renamed_stage: STAGE is named 'later', the table read 'first'$"
    ):
        stages.load("first")


def test_the_table_is_read_without_importing_the_commands():
    import subprocess
    import sys

    code = "import sys; from babelforge.commands import COMMANDS; print(len(COMMANDS), sorted(m for m in sys.modules if m.startswith('babelforge.') and m.endswith(('_stage', '.stage'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(" ", 1)
    assert int(out[0]) == len(table()) >= 30 and out[1].strip() == "[]"


def test_a_declaration_is_read_from_its_source(tmp_path):
    path = tmp_path / "toy_stage.py"
    path.write_text(
        textwrap.dedent(
            """\
            STAGE = Stage(
                "toy",
                "a toy stage",
                run,
                config=Config,
                deps=("${paths.labels}", "resources/x.tsv"),
                outs=("data/toy.parquet",),
                pinned=True,
            )
            """
        ),
        encoding="utf-8",
    )
    entry = _entry(path, "pkg.toy_stage")
    assert (entry.name, entry.help, entry.kind, entry.pinned, entry.module) == (
        "toy",
        "a toy stage",
        "stage",
        True,
        "pkg.toy_stage",
    )
    assert entry.reads == ("${paths.labels}", "resources/x.tsv") and entry.writes == ("data/toy.parquet",)
    path.write_text('STAGE = Stage(NAME, "help", run, tool=True)\n', encoding="utf-8")
    with pytest.raises(BabelforgeError, match="string literals"):
        _entry(path, "pkg.toy_stage")


def test_the_pipeline_order_follows_the_files():
    def entry(name, reads=(), writes=(), module="babelforge.x", kind="stage"):
        return Entry(name, module, "", kind, False, tuple(reads), tuple(writes))

    entries = [
        entry("report", reads=["r/a.json", "r/b.json"], writes=["r/all.csv"], module="babelforge.eval.report"),
        entry("b", reads=["d/x/part"], writes=["r/b.json"], module="babelforge.eval.b"),
        entry("tool", kind="tool"),
        entry("a", reads=["d/x"], writes=["r/a.json"], module="babelforge.eval.a"),
        entry("x", writes=["d/x"]),
    ]
    assert [e.name for e in _pipeline_order(entries)] == ["x", "a", "b", "report", "tool"]


def test_every_command_module_and_only_one_is_named_for_a_command():
    """One convention: a module declaring a command is `<name>_stage.py`, and every `*_stage.py` declares one."""
    declaring = {
        ".".join(("babelforge", *path.relative_to(REPO / "builders").with_suffix("").parts))
        for path in (REPO / "builders").rglob("*.py")
        if "\nSTAGE = Stage(" in path.read_text(encoding="utf-8")
    } | {
        ".".join(("babelforge", *path.relative_to(REPO).with_suffix("").parts))
        for path in (REPO / "eval").rglob("*.py")
        if "\nSTAGE = Stage(" in path.read_text(encoding="utf-8")
    }
    assert declaring == {entry.module for entry in table().values()}
    assert all(module.rsplit(".", 1)[1].endswith("_stage") for module in declaring), sorted(declaring)
    named = {
        ".".join(("babelforge", *path.relative_to(REPO / "builders").with_suffix("").parts))
        for path in (REPO / "builders").rglob("*_stage.py")
    } | {
        ".".join(("babelforge", *path.relative_to(REPO).with_suffix("").parts))
        for path in (REPO / "eval").rglob("*_stage.py")
    }
    assert named == declaring


def test_the_literals_of_a_declaration_and_which_files_declare_one(tmp_path, monkeypatch):
    # a tuple's string literals; a number or a computed item is no path, and marks the deps computed
    path = tmp_path / "odd_stage.py"
    path.write_text('STAGE = Stage("odd", "help", run, deps=("a", 3, *more), outs=("b",))\n', encoding="utf-8")
    entry = _entry(path, "pkg.odd_stage")
    assert (entry.reads, entry.writes, entry.reads_computed) == (("a",), ("b",), True)
    # only *_stage.py files that declare a command are commands
    (tmp_path / "plain_stage.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "helper.py").write_text('STAGE = Stage("x", "y", run, tool=True)\n', encoding="utf-8")
    monkeypatch.setattr(stage_table, "package_folders", lambda: [(tmp_path, "pkg")])
    assert [(found, module) for found, module, _ in stage_table._declaring_modules()] == [(path, "pkg.odd_stage")]


def test_a_foreach_stages_key_stands_for_one_name_in_the_pipeline_order():
    """A stage reading `build/languages/mvl-sib.tsv` comes after the foreach stage writing
    `build/languages/${key}.tsv`; `${key}` is one path part, and a longer setting name is another path."""
    views = _entry_of("views", writes=("${paths.language_views}/${key}.tsv",))
    reader = _entry_of("a_reader", reads=("${paths.language_views}/mvl-sib.tsv",))
    deeper = _entry_of("b_deeper", reads=("${paths.language_views}/x/mvl-sib.tsv",))
    other = _entry_of("c_other", reads=("${paths.language_views_old}/mvl-sib.tsv",))
    order = [e.name for e in _pipeline_order([reader, deeper, other, views])]
    assert order.index("views") < order.index("a_reader")
    assert order.index("b_deeper") < order.index("views") and order.index("c_other") < order.index("views")


def _entry_of(name, reads=(), writes=()):
    return Entry(name, f"babelforge.toy.{name}_stage", "", "stage", False, tuple(reads), tuple(writes))
