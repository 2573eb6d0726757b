"""What a command's settings become outside its code (babelforge.core.stage_settings): a flag's type
from its setting's annotation, the one-line refusal of a key the command does not read, the params of
a stage without settings."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest

from babelforge.core.config import from_group, load_config, setting, subgroup
from babelforge.core.errors import BabelforgeError
from babelforge.core.stage_settings import dvc_params, flag_argument, setting_field
from babelforge.core.stages import Paths, Stage, outputs, stage_paths


@dataclasses.dataclass(frozen=True)
class Capped:
    GROUP = "toy"
    limit: int | None = setting(None, "at most this many (none: all)")
    name: str = setting("x", "a name")
    paths: Paths = stage_paths()


def tool(**flags):
    return Stage("toy", "", lambda config: 0, config=Capped, tool=True, flags=flags)


def test_an_optional_number_flag_reads_its_number_and_a_text_flag_its_text():
    dest, words = flag_argument(tool(**{"--limit": "limit"}), "--limit")
    assert dest == "limit" and words["metavar"] == "N" and words["type"]("5") == 5
    assert words["help"] == "at most this many (none: all) (toy.limit)"
    _, text = flag_argument(tool(**{"--name": "name"}), "--name")
    assert text["type"] is str and text["type"]("007") == "007" and text["metavar"] == "VALUE"


def test_a_key_the_command_does_not_read_is_refused_naming_the_groups_it_reads():
    field, kind, qualified = setting_field(Capped, "paths.labels")
    assert (field.name, kind, qualified) == ("labels", str, "paths.labels")
    with pytest.raises(TypeError, match=r"^toy: no group eval\.common among those it reads \(toy, paths\)$"):
        setting_field(Capped, "eval.common.device")
    with pytest.raises(TypeError, match=r"^toy\.nope: no such setting of Capped$"):
        setting_field(Capped, "nope")


def test_a_stage_without_settings_is_rerun_for_the_paths_its_files_name_only():
    stage = Stage("bare", "", lambda args: 0, deps=("${paths.labels}", "resources/x.tsv"), outs=("${paths.hub}/b",))
    assert dvc_params(stage) == ["paths.labels", "paths.hub"]


@dataclasses.dataclass(frozen=True)
class Shared:
    GROUP = "toy.shared"
    level: int = setting({"sample": 1, "full": 2}, "a per-profile value")


@dataclasses.dataclass(frozen=True)
class Child:
    GROUP = "toy.child"
    size: int = setting(3, "a child stage's own key")


@dataclasses.dataclass(frozen=True)
class Toy:
    GROUP = "toy"
    seed: int = setting(0, "a seed")
    child: Child = subgroup(Child, "the child stage's group")
    shared: Shared = from_group(Shared, "toy.shared", "read from a shared group")
    paths: Paths = stage_paths()


def test_a_per_profile_default_is_the_sample_value_and_loads_per_profile():
    assert Shared().level == 1
    assert load_config(Shared, {"profile": "full"}).level == 2
    assert load_config(Shared, {"profile": "sample"}).level == 1
    assert load_config(Shared, {"profile": "full", "toy": {"shared": {"level": 5}}}).level == 5


def test_a_stage_params_are_derived(monkeypatch):
    import babelforge.core.stage_settings as stage_settings

    monkeypatch.setattr(stage_settings, "_declared_groups", lambda name: ("toy", "toy.child", "toy.shared"))
    stage = Stage(
        "toy", "", lambda config: 0, config=Toy, deps=("${paths.labels}",), outs=("${paths.hub}/toy",), pinned=True
    )
    # the profile (toy.shared chooses by profile), the paths its files name, its own keys one by one (a
    # child's sub-group sits inside its group), the shared group whole, the CPU pin
    assert dvc_params(stage) == ["profile", "paths.labels", "paths.hub", "toy.seed", "toy.shared", "build.cpu_isa"]
    narrowed = dataclasses.replace(stage, params=("toy.seed",), pinned=False)
    assert dvc_params(narrowed) == ["profile", "paths.labels", "paths.hub", "toy.seed"]
    assert outputs(stage, Toy()) == [f"{Paths().hub}/toy"]


def test_a_flag_takes_its_type_metavar_and_help_from_its_setting():
    from babelforge.cli import stage_parser

    @dataclasses.dataclass(frozen=True)
    class Flagged:
        GROUP = "toy"
        count: int = setting(3, "how many")
        names: list[str] = setting([], "which ones")
        mode: str = setting("a", "the mode")
        strict: bool = setting(False, "stop at the first problem")
        table: dict = setting({}, "a mapping")
        paths: Paths = stage_paths()

    stage = Stage(
        "toy",
        "a toy",
        lambda config: 0,
        config=Flagged,
        outs=("${paths.labels}",),
        flags={"--count": "count", "--names": "names", "--strict": "strict", "--out": ("paths.labels", "to write")},
    )
    parser = stage_parser(stage)
    args = parser.parse_args(["--count", "4", "--names", "a,b", "--strict", "--out", "x.parquet"])
    assert (args.count, args.names, args.strict, getattr(args, "paths.labels")) == (4, ["a", "b"], True, "x.parquet")
    text = parser.format_help()
    assert "--count N" in text and "--out FILE" in text and "(toy.count)" in text and "to write (paths.labels)" in text
    assert parser.parse_args([]).strict is None  # not given: params.yaml decides
    with pytest.raises(BabelforgeError, match=r"^--count 'many': not an integer"):
        parser.parse_args(["--count", "many"])  # the number rule's one line, not argparse's usage
    with pytest.raises(TypeError, match="written in configure"):
        stage_parser(dataclasses.replace(stage, flags={"--table": "table"}))
    with pytest.raises(TypeError, match="no such setting"):
        stage_parser(dataclasses.replace(stage, flags={"--nope": "nope"}))


def test_a_flag_metavar_names_its_choices_or_list():
    from babelforge.core.stage_settings import flag_argument

    @dataclasses.dataclass(frozen=True)
    class Choosy:
        GROUP = "toy"
        mode: Literal["a", "b"] = setting("a", "the mode")
        names: list[str] = setting([], "which ones")
        strict: bool = setting(False, "stop early")

    stage = Stage(
        "toy",
        "",
        lambda config: 0,
        config=Choosy,
        tool=True,
        flags={"--mode": "mode", "--names": "names", "--strict": "strict"},
    )
    assert flag_argument(stage, "--mode")[1]["metavar"] == "{a,b}"
    assert flag_argument(stage, "--names")[1]["metavar"] == "A[,B...]"
    assert "metavar" not in flag_argument(stage, "--strict")[1]  # a switch takes no value


def test_every_group_lists_each_command_reading_it_once_pinned_ones_under_build():
    from babelforge.core.stage_settings import params_groups
    from babelforge.core.stage_table import table

    groups = params_groups()
    assert list(groups)[:2] == ["paths", "build"]
    assert groups["build"][1] == [name for name, entry in table().items() if entry.pinned] != []
    readers = {name for _, names in groups.values() for name in names}
    assert all(len(names) == len(set(names)) for _, names in groups.values())
    # a command whose config is set by its flags alone reads no params.yaml group (unless pinned)
    assert "publish" not in readers and "diff" not in readers and "labels" in groups["paths"][1]


@dataclasses.dataclass(frozen=True)
class ByProfile:
    GROUP = "toy"
    profile: str = from_group(str, "profile", "the build profile")


def test_a_stage_whose_config_reads_the_profile_is_rerun_for_it():
    stage = Stage("toy", "", lambda config: 0, config=ByProfile, outs=("o",))
    assert dvc_params(stage) == ["profile"]
