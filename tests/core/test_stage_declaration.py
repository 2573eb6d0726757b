"""The declaration type (babelforge.core.stages): what cannot be a stage, the outputs a run locks, the
`paths:` group assembled from every declaration, a foreach item's deps."""

from __future__ import annotations

import dataclasses
import functools
import textwrap

import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.stage_table import table
from babelforge.core.stages import Paths, Stage, named_settings, outputs, padded_item, stage_paths


def test_a_declaration_that_cannot_be_a_stage_is_refused():
    with pytest.raises(TypeError, match="declares its outs"):
        Stage("x", "", lambda config: 0)
    with pytest.raises(TypeError, match="no GROUP"):
        Stage("x", "", lambda config: 0, config=Paths, tool=True)


def test_an_output_naming_another_setting_is_no_lock_target():
    @dataclasses.dataclass(frozen=True)
    class Out:
        GROUP = "toy"
        paths: Paths = stage_paths()

    stage = Stage("toy", "", lambda config: 0, config=Out, outs=("${paths.hub}/a", "${toy.out}", "${paths.nope}"))
    assert outputs(stage, Out()) == [f"{Paths().hub}/a"]


def test_each_artifact_path_is_declared_by_the_stage_that_owns_it(tmp_path, monkeypatch):
    import babelforge.core.stages as stages

    # the repository's: every path a stage's files name is declared by one stage (or core's metrics)
    owned = {name: entry.name for entry in table().values() for name, _, _ in entry.owned_paths}
    assert (owned["labels"], owned["senses"], owned["hub"], owned["eval_reports"]) == (
        "labels",
        "senses",
        "card",
        "eval_report",
    )
    assert [f.name for f in dataclasses.fields(Paths)][-1] == "metrics" and "metrics" not in owned

    # a planted tree: the group is assembled from the declarations, in pipeline order, core's last
    def plant(name, text):
        (tmp_path / f"{name}_stage.py").write_text(textwrap.dedent(text), encoding="utf-8")

    plant("make", 'STAGE = Stage("make", "h", run, outs=("${paths.made}",), owns={"made": ("data/m", "made")})\n')
    plant("use", 'STAGE = Stage("use", "h", run, deps=("data/m",), outs=("x",), owns={"used": ("data/u", "used")})\n')
    import babelforge.core.stage_table as stage_table

    monkeypatch.setattr(stage_table, "package_folders", lambda: [(tmp_path, "pkg")])
    # fresh caches for the planted tree (the table as `Paths` reads it); the project's come back after the test
    for cached in (stages.table, stages.paths_class):
        monkeypatch.setattr(stages, cached.__name__, functools.cache(cached.__wrapped__))
    fields = dataclasses.fields(stages.paths_class())
    assert [(f.name, f.default, f.metadata["help"]) for f in fields] == [
        ("made", "data/m", "made"),
        ("used", "data/u", "used"),
        ("metrics", "metrics", fields[-1].metadata["help"]),
    ]
    plant("again", 'STAGE = Stage("again", "h", run, tool=True, owns={"made": ("data/n", "again")})\n')
    stages.table.cache_clear()
    stages.paths_class.cache_clear()
    with pytest.raises(BabelforgeError, match=r"paths.made is declared twice: by pkg.\w+_stage and pkg.\w+_stage"):
        stages.paths_class()
    plant("again", 'STAGE = Stage("again", "h", run, tool=True, owns={"made": "data/n"})\n')
    stages.table.cache_clear()
    with pytest.raises(BabelforgeError, match=r"owns=\.\.\.\) is a literal"):
        stages.table()
    # the keyword's old name, as a guide written before the rename shows it: one line saying the new one
    plant("again", 'STAGE = Stage("again", "h", run, tool=True, paths={"made": ("data/n", "again")})\n')
    stages.table.cache_clear()
    with pytest.raises(BabelforgeError, match=r"again_stage\.py: Stage\(paths=\.\.\.\) is now Stage\(owns=\.\.\.\)"):
        stages.table()


def test_a_foreach_item_with_fewer_deps_repeats_its_last_and_more_is_an_error():
    assert padded_item("x", ["a"], ("data", "more", "licences")) == {"data": "a", "more": "a", "licences": "a"}
    assert padded_item("x", ["a", "b"], ("data", "more")) == {"data": "a", "more": "b"}
    with pytest.raises(
        BabelforgeError, match=r"^view v: 3 files; its stage reads 1 to 2 \(\$\{item.data\}, \$\{item.more\}\)$"
    ):
        padded_item("view v", ["a", "b", "c"], ("data", "more"))
    with pytest.raises(BabelforgeError, match="0 files"):
        padded_item("view v", [], ("data", "more"))


def test_the_settings_a_path_names_leave_out_a_foreach_key_and_item():
    assert named_settings("${paths.hub}/${key}/${item.data}/${wordnet.classes}") == ["paths.hub", "wordnet.classes"]
