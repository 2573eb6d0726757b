"""The dataset registry: every spec is complete, and dvc.yaml's card stage has one entry per
dataset whose deps are what its spec reads and imports."""

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from babelforge.core.config import load_config
from babelforge.core.datasets import (
    REGISTRY,
    AuditSection,
    DatasetSpec,
    artifact_path,
    citation,
    names,
    slice_path,
    spec,
)
from babelforge.core.declarations import imported as resolve
from babelforge.core.errors import BabelforgeError
from babelforge.core.licences import HF_LICENSES, Licence
from babelforge.core.stages import Paths
from tests.imports import repo_files_run_by
from tests.test_dvc_deps import NOT_A_DEP

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", names())
def test_every_spec_is_complete(name):
    found = spec(name)
    assert isinstance(found, DatasetSpec) and found.name == name
    for text in (found.pretty_name, found.summary, found.split, found.config_unit):
        assert isinstance(text, str) and text.strip()
    assert found.task_categories and found.citations and found.artifacts
    for artifact in found.artifacts:
        artifact_path(Paths(), artifact)  # a name of the paths group (or a file inside one)
    for key in found.citations:
        assert citation(key).startswith("@")
    for applies_to, licence in found.licences:
        assert applies_to and isinstance(licence, Licence) and licence.hf_id in HF_LICENSES
    for reference in (found.read, found.source_licences, found.audit_notes):
        assert reference is None or callable(resolve(reference))
    assert callable(resolve(found.read))
    if found.audit is not None:
        assert isinstance(found.audit, AuditSection) and found.audit.title
        assert found.audit.artifact in found.artifacts
        assert found.audit.reader is None or callable(resolve(found.audit.reader))


def test_section_keys_are_unique_and_the_labels_are_the_audits_own_rows():
    sections = [found.audit for found in map(spec, names()) if found.audit is not None]
    assert len({section.key for section in sections}) == len(sections)
    assert [section.key for section in sections if section.reader is None] == ["labels"]


def test_an_unknown_dataset_is_one_line_naming_the_known_ones():
    with pytest.raises(BabelforgeError, match="known: babel-imagenet, ") as error:
        spec("babel-imagnet")
    assert "\n" not in str(error.value)


def test_a_missing_citation_names_the_file():
    with pytest.raises(BabelforgeError, match="citations.bib: no BibTeX entry 'nobody-2099'"):
        citation("nobody-2099")


def _interpolate(text: str, params: dict) -> str:
    def value(match):
        node = params
        for part in match.group(1).split("."):
            node = node[part]
        return str(node)

    return re.sub(r"\$\{([\w.]+)\}", value, text)


def test_dvc_card_stage_has_one_entry_per_dataset_with_its_artifacts_and_code():
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text())
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    paths = load_config(Paths, params, "paths")
    stage = dvc["stages"]["card"]
    assert list(stage["foreach"]) == names(), "dvc.yaml's card entries and the registry disagree"
    deps = stage["do"]["deps"]
    assert {"${item.data}", "${item.more}", "${item.licences}", "${paths.audit}/datasets/${key}.json"} <= set(deps)
    card_files = {dep for dep in deps if dep.startswith("builders/")}
    for name, item in stage["foreach"].items():
        found = spec(name)
        reads = {_interpolate(item[key], params) for key in ("data", "more", "licences")}
        assert reads == {str(artifact_path(paths, artifact)) for artifact in found.artifacts}, name
        assert _interpolate("${paths.audit}/datasets/" + name + ".json", params) == str(slice_path(paths, name))
        # a card resolves its spec by name: every file the spec module runs is a code dep of the cards
        code = {path.relative_to(REPO).as_posix() for path in repo_files_run_by(REGISTRY[name].split(":")[0])}
        code -= NOT_A_DEP  # the declaration mechanism decides nothing a card writes
        assert code <= card_files, f"{name}: the card's deps miss {sorted(code - card_files)}"


def test_the_registry_is_every_spec_of_an_area_dataset_module(tmp_path, monkeypatch):
    import babelforge.core.datasets as datasets

    assert names() == ["babel-imagenet", "babel-imagenet-prompts", "mt-captions", "knowledge", "mvl-sib", "xm3600"]
    area = tmp_path / "builders" / "toyarea"
    area.mkdir(parents=True)
    (area / "dataset.py").write_text('TOY = DatasetSpec(name="toy", pretty_name="Toy")\nOTHER = 3\n')
    (tmp_path / "builders" / "core").mkdir()
    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "builders" / "core" / "datasets.py"))
    assert datasets._discovered("DatasetSpec") == {"toy": "babelforge.toyarea.dataset:TOY"}
    (area / "dataset.py").write_text("TOY = DatasetSpec(name=NAME)\n")
    with pytest.raises(BabelforgeError, match="names itself with a string"):
        datasets._discovered("DatasetSpec")


def test_a_spec_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec("knowledge").name = "other"  # type: ignore[misc]


def test_dvc_audit_stage_depends_on_every_spec_and_section_reader_it_resolves_by_name():
    """The audit imports no dataset: it resolves each spec and each spec's section reader from the
    registry's strings, so dvc.yaml must name their files for a change to rerun it."""
    deps = {str(dep) for dep in yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["audit"]["deps"]}
    modules = [REGISTRY[name].split(":")[0] for name in names()]
    modules += [found.audit.reader.split(":")[0] for found in map(spec, names()) if found.audit and found.audit.reader]
    for module in modules:
        for path in repo_files_run_by(module):
            relative = path.relative_to(REPO).as_posix()
            if relative in NOT_A_DEP:  # the declaration mechanism decides nothing the audit writes
                continue
            assert any(relative == dep or relative.startswith(dep.rstrip("/") + "/") for dep in deps), relative
