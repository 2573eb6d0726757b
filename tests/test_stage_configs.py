"""Every stage Config loads from the repo's params.yaml (written from the Configs by
scripts/pipeline_files.py), with help on every setting. Tools that read no params (they run outside
`dvc repro` on files named on their command line) have no config and run as `run(args)`.
"""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from babelforge.commands import COMMANDS
from babelforge.core.config import describe, load_config
from babelforge.core.stages import load


@pytest.fixture(scope="module")
def sample_params(repo_root) -> dict:
    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    return {**params, "profile": "sample"}


# Command-line tools over files their flags name: no params group, never a dvc.yaml stage.
TOOLS = {"eval_cider", "eval_clipscore_pairs", "eval_correlate", "eval_paper", "pins", "review", "taggers"}


def dvc_commands(repo_root) -> set[str]:
    """The commands dvc.yaml's stages run (`babelforge <name> ...`), foreach stages included."""
    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {str(stage["do"]["cmd"] if "foreach" in stage else stage["cmd"]).split()[1] for stage in stages.values()}


def config_class(name: str):
    return load(name).config


def test_every_command_but_the_tools_has_a_config(repo_root):
    without = {name for name in COMMANDS if config_class(name) is None}
    assert without == TOOLS
    assert not TOOLS & dvc_commands(repo_root)


def test_the_table_says_which_commands_dvc_runs(repo_root):
    """`kind`: a stage is run by dvc.yaml, a tool by hand; every pinned command's stage lists the CPU pin
    among its params (the CLI pins from it)."""
    assert {name for name, command in COMMANDS.items() if command.kind == "stage"} == dvc_commands(repo_root)
    assert {command.kind for command in COMMANDS.values()} == {"stage", "tool"}
    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    for name, stage in stages.items():
        body = stage.get("do", stage)
        command = COMMANDS[str(body["cmd"]).split()[1]]
        assert command.pinned == ("build.cpu_isa" in body.get("params", [])), name


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - TOOLS))
def test_every_setting_has_its_help_and_loads(name, sample_params):
    """Each default is written once, in the Config (params.yaml is written from it:
    tests/test_pipeline_files.py); every own setting carries the help --help and params.yaml show."""
    cls = config_class(name)
    load_config(cls, sample_params)
    for field in dataclasses.fields(cls):
        assert {"group", "subgroup"} & set(field.metadata) or field.metadata.get("help"), (
            f"{cls.GROUP}.{field.name} has no help"
        )
    assert describe(cls)
