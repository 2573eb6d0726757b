"""dvc.yaml and params.yaml are what the stage declarations give (scripts/pipeline_files.py). The
derivation itself is tested beside its modules: the command table read without imports
(tests/core/test_stage_table.py), a stage's params and flags (tests/core/test_stage_settings.py), the
declaration type and its `paths:` group (tests/core/test_stage_declaration.py)."""

from __future__ import annotations

import importlib.util

import pytest
import yaml

from babelforge.core.config import load_config
from babelforge.core.stage_table import table
from babelforge.core.stages import load
from tests.imports import REPO


def pipeline_files():
    spec = importlib.util.spec_from_file_location("pipeline_files", REPO / "scripts" / "pipeline_files.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return pipeline_files()


@pytest.fixture(scope="module")
def wanted(generator):
    return generator.generated()


def committed(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def test_the_committed_files_are_what_the_declarations_give(generator, wanted):
    stale = generator.stale_files({name: committed(name) for name in wanted}, wanted)
    assert stale == [], "run python scripts/pipeline_files.py"


def test_a_planted_drift_is_found(generator, wanted):
    """A hand edit of dvc.yaml (a dep dropped) or of a default in params.yaml fails the check, naming the file."""
    dvc = committed("dvc.yaml").replace("    - resources/wordnet_lexnames.tsv\n", "", 1)
    params = committed("params.yaml").replace("  min_classes: 10", "  min_classes: 11", 1)
    assert dvc != committed("dvc.yaml") and params != committed("params.yaml")
    assert generator.stale_files({"dvc.yaml": dvc, "params.yaml": params}, wanted) == [
        "dvc.yaml (its content differs from the declarations)",
        "params.yaml (its content differs from the declarations)",
    ]
    # the profile line is the project's switch: switching it is no drift
    full = generator.in_dvc_form(generator.params_yaml("full"))
    assert full == wanted["params.yaml"].replace("profile: sample\n", "profile: full\n", 1)
    relaid = committed("params.yaml").replace("profile: sample\n", "profile:   sample\n", 1)
    assert generator.stale_files({"dvc.yaml": wanted["dvc.yaml"], "params.yaml": relaid}, wanted) == [
        "params.yaml (its layout differs from the declarations)"
    ]


def test_setting_a_parameter_as_dvc_exp_run_does_changes_one_line(tmp_path, wanted):
    """`dvc exp run -S key=value` rewrites params.yaml through DVC's YAML round trip
    (dvc.utils.hydra.apply_overrides): the committed file is in that form, so only the set line changes."""
    from dvc.utils.hydra import apply_overrides
    from dvc.utils.serialize import load_yaml

    path = tmp_path / "params.yaml"
    path.write_text(wanted["params.yaml"], encoding="utf-8")
    apply_overrides(path, ["labels.min_classes=11", "captions.input.limit=5"])
    load_yaml(path)  # what `dvc repro` reads: a flow list rewrapped by the round trip fails here
    before, after = wanted["params.yaml"].splitlines(), path.read_text(encoding="utf-8").splitlines()
    changed = [(old, new) for old, new in zip(before, after) if old != new]
    assert len(before) == len(after) and [new.split("#")[0].strip() for _, new in changed] == [
        "limit: 5",
        "min_classes: 11",
    ]


def test_every_dvc_stage_is_a_declared_stage_and_every_setting_loads(wanted):
    stages = yaml.safe_load(wanted["dvc.yaml"])["stages"]
    assert set(stages) == {name for name, entry in table().items() if entry.kind == "stage"}
    params = yaml.safe_load(wanted["params.yaml"])
    for name in table():
        stage = load(name)
        if stage.config is not None and stage.in_params_yaml:
            for profile in ("sample", "full"):
                load_config(stage.config, {**params, "profile": profile})  # every key known, every type right
