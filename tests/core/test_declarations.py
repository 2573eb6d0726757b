"""One discovery mechanism (babelforge.core.declarations) for commands, datasets, language views and eval
tasks: files found by name, declarations read with `ast` (nothing imported), imported by reference when used."""

from __future__ import annotations

import sys
import textwrap

import pytest

from babelforge.core import datasets, stage_table, stages
from babelforge.core.declarations import declared_calls, declaring_files, imported, keywords, literal
from babelforge.core.errors import BabelforgeError
from babelforge.eval import tasks

AREA = '''
"""A planted area's declarations."""

from babelforge.core.datasets import LanguageView

Kind = dict
FIRST = LanguageView(name="first", reads=("a",), keys="plant.area.dataset:keys")
LATER = Kind(name=f"computed {1}")
PAIR_A = PAIR_B = LanguageView(name="pair", reads=(), keys="")
OTHER = dict(name="not a view")


def keys(files, params):
    INSIDE = LanguageView(name="inside", reads=(), keys="")  # not top level: no declaration
    return {"deu_Latn"}
'''


@pytest.fixture
def plant(tmp_path, monkeypatch):
    """A package `plant` with one area on sys.path, unimported."""
    area = tmp_path / "plant" / "area"
    area.mkdir(parents=True)
    (tmp_path / "plant" / "__init__.py").write_text("")
    (area / "__init__.py").write_text("")
    (area / "dataset.py").write_text(textwrap.dedent(AREA).lstrip(), encoding="utf-8")
    (tmp_path / "plant" / "other.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path / "plant"
    for name in [name for name in sys.modules if name == "plant" or name.startswith("plant.")]:
        del sys.modules[name]


def test_declarations_are_read_from_the_files_found_by_name_without_importing_them(plant):
    assert declaring_files(plant, "plant", "*/dataset.py") == [(plant / "area" / "dataset.py", "plant.area.dataset")]
    assert [module for _, module in declaring_files(plant.parent, "top", "*.py", recursive=True)] == [
        "top.plant.__init__",
        "top.plant.area.__init__",
        "top.plant.area.dataset",
        "top.plant.other",
    ]
    found = declared_calls(plant / "area" / "dataset.py", "LanguageView")
    # top-level assignments of that kind only, as written; two targets are no one name
    assert [(name, literal(keywords(call).get("name"))) for name, call in found] == [("FIRST", "first"), (None, "pair")]
    computed = declared_calls(plant / "area" / "dataset.py", "Kind")
    assert literal(keywords(computed[0][1]).get("name"), "computed") == "computed"  # an f-string is no literal
    assert "plant.area.dataset" not in sys.modules


def test_a_reference_is_imported_when_used_and_one_that_is_not_there_is_one_line(plant):
    view = imported("plant.area.dataset:FIRST")
    assert isinstance(view, datasets.LanguageView) and view.name == "first"
    assert imported("plant.area.dataset:keys")([], {}) == {"deu_Latn"}
    with pytest.raises(BabelforgeError, match=r"^plant\.area\.dataset:NOPE: cannot be imported \(.*NOPE.*\); look$"):
        imported("plant.area.dataset:NOPE", "; look")
    with pytest.raises(BabelforgeError, match=r"^plant\.nowhere:X: cannot be imported \(No module named"):
        imported("plant.nowhere:X")


def test_the_three_registries_are_found_by_the_one_mechanism():
    builders, eval_folder = (folder for folder, _ in stage_table.package_folders())
    views = {
        literal(keywords(call).get("name")): f"{module}:{name}"
        for path, module in declaring_files(builders, "babelforge", "*/dataset.py")
        for name, call in declared_calls(path, "LanguageView")
    }
    assert views == datasets.LANGUAGE_VIEWS and "caption-sets" in views  # an area's view beside its datasets
    assert set(datasets.REGISTRY) == {"babel-imagenet", "babel-imagenet-prompts", "mt-captions", "knowledge"} | {
        "mvl-sib",
        "xm3600",
    }
    assert tasks.REGISTRY == tuple(
        f"{module}:TASK" for _, module in declaring_files(eval_folder, "babelforge.eval", "*/task.py")
    )
    assert {"babelforge.eval.zeroshot.task:TASK", "babelforge.eval.retrieval.task:TASK"} <= set(tasks.REGISTRY)
    # a command's module is a *_stage.py anywhere below either folder: eval's stages beside the builders'
    modules = {entry.module for entry in stage_table.table().values()}
    assert {"babelforge.babel_imagenet.labels_stage", "babelforge.eval.zeroshot.zeroshot_stage"} <= modules
    assert stages.load("labels").name == "labels"


def test_a_dataset_declaration_without_a_literal_name_is_refused_in_one_line(tmp_path, monkeypatch):
    area = tmp_path / "babelforge" / "area"
    area.mkdir(parents=True)
    (area / "dataset.py").write_text('NAME = "x"\nSPEC = DatasetSpec(name=NAME)\n', encoding="utf-8")
    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "babelforge" / "core" / "datasets.py"))
    with pytest.raises(BabelforgeError, match=r"dataset\.py: a DatasetSpec is assigned to one name and names itself"):
        datasets._discovered("DatasetSpec")
    (area / "dataset.py").write_text('A = DatasetSpec(name="x")\nB = DatasetSpec(name="x")\n', encoding="utf-8")
    with pytest.raises(BabelforgeError, match=r"^two DatasetSpecs named 'x': babelforge\.area\.dataset:A and "):
        datasets._discovered("DatasetSpec")
