"""docs/adding_a_dataset.md followed for a toy dataset, in a package of its own outside the repo.

The toy area (`toyset`, written to tmp_path) holds its spec (`dataset.py`) and its audit section
(`audit.py`: reader + summary); its artifact's path is one more `paths` field (a `Paths` subclass
here, params.yaml's `paths:` group in the repo); it is registered by one entry in the registry.
Nothing else changes, and the audit's section loop, the audit report and the card builder pick it
up: the generic code holds no list of datasets.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from babelforge.audit.audit_stage import build_audit
from babelforge.core import datasets
from babelforge.core.config import setting
from babelforge.core.declarations import imported
from babelforge.core.io import read_table, write_table
from babelforge.core.languages import read_registry
from babelforge.core.provenance import provenance
from babelforge.core.stages import Paths
from babelforge.publish.card import validate_card
from babelforge.publish.card_stage import build_card
from tests.audit.conftest import audit_config, stub_rank, write_label_inputs
from tests.imports import REPO, imported_names, repo_files_run_by

PACKAGE = "toyset"
NAME = "toy-captions"

# Step 4: the spec, in the area.
DATASET = '''
"""The `toy-captions` dataset: one caption per image and language."""

from babelforge.core.datasets import (
    AuditSection,
    DatasetSpec,
    DatasetTables,
    SectionPlot,
    per_language,
    read_artifact,
)
from babelforge.core.licences import Licence

TOY = DatasetSpec(
    name="toy-captions",
    pretty_name="Toy captions",
    summary="Captions of a few images; one row per image and language: `image_id`, `caption`.",
    artifacts=("toy",),
    read="toyset.dataset:read_toy",
    task_categories=("image-to-text",),
    citations=("nllb-2022",),
    licences=(("captions", Licence("CC BY 4.0", "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/")),),
    audit_notes="toyset.dataset:toy_audit_notes",
    audit=AuditSection(
        key="toy",
        title="Toy captions",
        artifact="toy",
        reader="toyset.audit:toy",
        overview=True,
        plot=SectionPlot("toy_length.png", "Toy caption length per language", "characters"),
    ),
)


def read_toy(paths) -> DatasetTables:
    table, record = read_artifact(paths.toy, "toy captions")
    return DatasetTables(
        per_language(table, TOY.split, ["image_id", "caption"]), provenance={paths.toy: record}, sort_by=("image_id",)
    )


def toy_audit_notes(found) -> list[str]:
    return [f"The audit found {found['overview']['captions']} toy captions."]
'''

# Step 8: the audit section, in the area: the reader and its summary.
AUDIT = '''
"""The audit's toy captions section."""

from pathlib import Path

from babelforge.core.io import read_table
from babelforge.core.sections import Section


def toy(path) -> Section | None:
    if not path or not Path(path).exists():
        return None
    table = read_table(path)

    def language(lang):
        return toy_summary(table.loc[table["lang"] == lang, "caption"].tolist())

    def distribution():
        from matplotlib import cbook

        lengths = {lang: part["caption"].str.len().to_numpy() for lang, part in table.groupby("lang")}
        return {lang: {**cbook.boxplot_stats(values, labels=[lang])[0], "fliers": []} for lang, values in lengths.items()}

    return Section(
        language,
        overview=lambda: {"status": "built", "captions": len(table)},
        distribution=distribution,
        languages=lambda: sorted(table["lang"].unique()),
    )


def toy_summary(captions: list[str]) -> dict:
    if not captions:
        return {"status": "no toy captions for this language"}
    return {"status": "built", "captions": len(captions), "longest": max(len(caption) for caption in captions)}
'''

CAPTIONS = {
    "fin_Latn": ["kissa sohvalla", "koira", "kaksi lintua puussa"],
    "rus_Cyrl": ["кошка", "собака на траве"],
}


# Step 1: the artifact's path, once (in the repo: `owns={...}` in the declaration of the stage writing it).
@dataclasses.dataclass(frozen=True)
class ToyPaths(Paths):
    toy: str = setting("data/toy/captions.parquet", "toy captions")


@pytest.fixture
def toy_area(tmp_path, monkeypatch) -> Path:
    """The toy area as a package on sys.path, registered by one entry (step 6)."""
    area = tmp_path / "src" / PACKAGE
    area.mkdir(parents=True)
    (area / "__init__.py").write_text('"""A toy dataset area."""\n')
    (area / "dataset.py").write_text(textwrap.dedent(DATASET).lstrip())
    (area / "audit.py").write_text(textwrap.dedent(AUDIT).lstrip())
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    for module in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(datasets.REGISTRY, NAME, f"{PACKAGE}.dataset:TOY")
    yield area
    for module in [name for name in sys.modules if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        del sys.modules[module]


@pytest.fixture
def built(tmp_path) -> Path:
    """The labels the audit needs, and the toy dataset's table (its build stage's output)."""
    write_label_inputs(tmp_path)
    rows = [
        {"image_id": image, "lang": lang, "caption": caption}
        for lang, captions in CAPTIONS.items()
        for image, caption in enumerate(captions)
    ]
    record = provenance("toy", {}, {})
    write_table(pd.DataFrame(rows), tmp_path / "toy.parquet", sort_by=["lang", "image_id"], provenance=record)
    return tmp_path


def toy_config(tmp: Path):
    config = audit_config(tmp)
    paths = {field.name: getattr(config.paths, field.name) for field in dataclasses.fields(Paths)}
    paths.update(toy=str(tmp / "toy.parquet"), hub=str(tmp / "build" / "hub"))
    return dataclasses.replace(config, paths=ToyPaths(**paths))


def test_the_toy_area_imports_only_core(toy_area):
    """The spec and the audit section need the core's types, nothing of the audit or the card."""
    for module in ("dataset", "audit"):
        found = imported_names(toy_area / f"{module}.py", f"{PACKAGE}.{module}")
        assert {name for name in found if name.startswith("babelforge")} <= {
            name for name in found if name.startswith("babelforge.core")
        }, module


def test_the_registry_resolves_the_toy_spec(toy_area):
    toy = datasets.spec(NAME)
    assert datasets.names()[-1] == NAME and toy in datasets.specs()
    assert callable(imported(toy.read)) and callable(imported(toy.audit.reader))


def test_the_audit_reports_the_toy_section(toy_area, built):
    config = toy_config(built)
    summary = build_audit(config, read_registry(built / "languages.tsv"), rank=stub_rank)
    out = Path(config.paths.audit)
    toy_summary = imported(f"{PACKAGE}.audit:toy_summary")

    # the section loop: the toy input's status, each language's entry, the overview
    assert summary["inputs"]["toy"] == "built"
    assert summary["toy"] == {"status": "built", "captions": 5}
    for lang in ("fin_Latn", "rus_Cyrl", "jpn_Jpan"):
        record = json.loads((out / f"{lang}.json").read_text())
        assert record["toy"] == toy_summary(CAPTIONS.get(lang, [])), lang
    assert json.loads((out / "fin_Latn.json").read_text())["toy"]["longest"] == len("kaksi lintua puussa")
    # its heading on the language pages, its plot on the index
    assert "<h2>Toy captions</h2>" in (out / "fin_Latn.html").read_text()
    assert "toy_length.png" in summary["plots"] and (out / "toy_length.png").read_bytes().startswith(b"\x89PNG")
    assert "Toy caption length per language" in (out / "index.html").read_text()
    # its slice: what the card reads of the audit
    found = json.loads((out / "datasets" / f"{NAME}.json").read_text())
    assert found["audited"] and found["section"] == "toy" and found["status"] == "built"
    # the languages of the toy input, not the labels': a labels-only change leaves the slice alone
    assert found["overview"] == summary["toy"] and list(found["languages"]) == sorted(CAPTIONS)
    assert found["languages"]["rus_Cyrl"] == toy_summary(CAPTIONS["rus_Cyrl"])
    # the datasets already registered are reported as before
    assert summary["inputs"]["prompts"] == "not built" and "kiwi.png" not in summary["plots"]

    # not built: the section says so, and its plot is named as not plotted
    (built / "toy.parquet").unlink()
    summary = build_audit(config, read_registry(built / "languages.tsv"), rank=stub_rank)
    assert summary["inputs"]["toy"] == "not built" and summary["toy"] == {"status": "not built"}
    assert json.loads((out / "fin_Latn.json").read_text())["toy"] == {"status": "not built"}
    assert "Not plotted (input not built):" in (out / "index.html").read_text()
    assert "Toy caption length per language" in (out / "index.html").read_text().split("Not plotted")[1]


def test_the_card_builder_builds_the_toy_card(toy_area, built):
    config = toy_config(built)
    build_audit(config, read_registry(built / "languages.tsv"), rank=stub_rank)
    folder = build_card(datasets.spec(NAME), config.paths, read_registry(built / "languages.tsv"))
    assert folder == built / "build" / "hub" / NAME and validate_card(folder) == []
    readme = (folder / "README.md").read_text(encoding="utf-8")
    assert "# Toy captions" in readme and "one row per image and language" in readme
    assert "config_name: fin_Latn" in readme and "config_name: rus_Cyrl" in readme
    assert "- The audit found 5 toy captions." in readme  # its audit notes, from its slice
    assert "@article{nllb-2022," in readme and "cc-by-4.0" in readme
    for lang, captions in CAPTIONS.items():
        table = read_table(folder / "data" / lang / "test.parquet")
        assert table["caption"].tolist() == captions and table["image_id"].tolist() == list(range(len(captions)))


def test_every_section_reader_imports_no_audit_or_publish_code():
    """The real areas' readers are as the toy's: the audit calls them by name, they import only
    the core (and their own area), so the audit -> area -> audit cycle cannot form."""
    for found in datasets.specs():
        if found.audit is None or found.audit.reader is None:
            continue
        module = found.audit.reader.split(":")[0]
        area = module.split(".")[1]
        reached = {path.relative_to(REPO).parts[1] for path in repo_files_run_by(module)} - {"__init__.py"}
        assert reached <= {"core", area}, f"{module} reaches {sorted(reached - {'core', area})}"
