"""Every stage Config loads from the repo's params.yaml, and its code defaults are params.yaml's values.

A default that disagrees with params.yaml means `babelforge <stage>` without the file (or a
test that builds `Config()`) runs another pipeline than `dvc repro`. Values given per profile
in params.yaml are compared in their `sample` form. Tools that read no params (they run outside
`dvc repro` on files named on their command line) keep `configure(parser)` + `run(args)`.
"""

from __future__ import annotations

import dataclasses
import importlib

import pytest
import yaml

from babelforge.commands import COMMANDS
from babelforge.core.config import Paths, describe, load_config


@pytest.fixture(scope="module")
def sample_params(repo_root) -> dict:
    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    return {**params, "profile": "sample"}


# Command-line tools over files their flags name: no params group, never a dvc.yaml stage.
TOOLS = {"eval_cider", "eval_clipscore_pairs", "eval_correlate", "eval_paper", "review", "taggers"}


def dvc_commands(repo_root) -> set[str]:
    """The commands dvc.yaml's stages run (`babelforge <name> ...`), foreach stages included."""
    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {str(stage["do"]["cmd"] if "foreach" in stage else stage["cmd"]).split()[1] for stage in stages.values()}


def config_class(name: str):
    return getattr(importlib.import_module(COMMANDS[name].module), "Config", None)


def test_every_command_but_the_tools_has_a_config(repo_root):
    without = {name for name in COMMANDS if config_class(name) is None}
    assert without == TOOLS
    assert not TOOLS & dvc_commands(repo_root)


def test_the_table_says_which_commands_dvc_runs(repo_root):
    """`kind` in babelforge.commands: a stage is run by dvc.yaml, a tool by hand; every pinned
    command's stage lists nllb.cpu_isa among its params (the CLI pins from it)."""
    assert {name for name, command in COMMANDS.items() if command.kind == "stage"} == dvc_commands(repo_root)
    assert {command.kind for command in COMMANDS.values()} == {"stage", "tool"}
    text = (repo_root / "dvc.yaml").read_text(encoding="utf-8")
    stages = yaml.safe_load(text)["stages"]
    for name, stage in stages.items():
        body = stage.get("do", stage)
        command = COMMANDS[str(body["cmd"]).split()[1]]
        params = body.get("params", [])
        assert command.pinned == ("nllb.cpu_isa" in params or "nllb" in params), name  # the group holds it


def differences(default, loaded, where: str) -> list[str]:
    """Every field (nested groups walked) whose code default differs from the loaded value."""
    if not dataclasses.is_dataclass(default):
        return [] if default == loaded else [f"{where}: code {default!r}, params.yaml {loaded!r}"]
    found = []
    for field in dataclasses.fields(default):
        found += differences(getattr(default, field.name), getattr(loaded, field.name), f"{where}.{field.name}")
    return found


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - TOOLS))
def test_config_loads_and_defaults_equal_params_yaml(name, sample_params):
    cls = config_class(name)
    loaded = load_config(cls, sample_params)
    assert not differences(cls(), loaded, cls.GROUP), f"babelforge {name}: " + "; ".join(
        differences(cls(), loaded, cls.GROUP)
    )
    for field in dataclasses.fields(cls):  # every own setting has its help text for --help
        assert "group" in field.metadata or field.metadata.get("help"), f"{cls.GROUP}.{field.name} has no help"
    assert describe(cls)


def test_a_disagreeing_default_is_reported(sample_params):
    from babelforge.lexicon.wordnet_stage import Config

    params = {
        **sample_params,
        "wordnet": {**sample_params["wordnet"], "dict_dir": "/elsewhere"},
        "paths": {**sample_params["paths"], "wordnet": "x.parquet"},
    }
    assert differences(Config(), load_config(Config, params), "wordnet") == [
        "wordnet.dict_dir: code '/usr/share/wordnet', params.yaml '/elsewhere'",
        "wordnet.paths.wordnet: code 'data/wordnet/imagenet1k.parquet', params.yaml 'x.parquet'",
    ]
    assert Paths() == load_config(Paths, sample_params, "paths")
