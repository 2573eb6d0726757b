"""Typed stage configs: one loader resolves profiles, rejects unknown keys and wrong types, fills paths."""

from dataclasses import dataclass

import pytest
import yaml

from babelforge.cli import main as cli
from babelforge.core.config import as_params, build, describe, from_group, load_config, override, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.stages import Paths, stage_paths


@dataclass(frozen=True)
class Inner:
    beams: int = setting(4, "beam width")
    ratio: float = setting(0.5, "a ratio")


@dataclass(frozen=True)
class Demo:
    GROUP = "demo"
    size: int = setting(10, "how many")
    names: list[str] = setting(["a"], "names")
    limit: int | None = setting(None, "optional limit")
    inner: Inner = setting(Inner(), "nested group")
    profile: str = from_group(str, "profile", "the build profile")
    paths: Paths = stage_paths()


def test_defaults_when_the_group_is_absent():
    config = load_config(Demo, {"profile": "sample"})
    assert config == Demo(profile="sample")
    assert config.paths.labels == "data/babel_imagenet/labels.parquet"


def test_profile_choices_resolve_at_any_depth():
    params = {
        "profile": "full",
        "demo": {"size": {"sample": 1, "full": 2}, "inner": {"beams": {"sample": 8, "full": 100}}},
        "paths": {"labels": {"sample": "x.parquet", "full": "y.parquet"}},
    }
    config = load_config(Demo, params)
    assert (config.size, config.inner.beams, config.profile, config.paths.labels) == (2, 100, "full", "y.parquet")


@pytest.mark.parametrize(
    "group, message",
    [
        ({"sise": 3}, "unknown key demo.sise"),
        ({"inner": {"beam": 3}}, "unknown key demo.inner.beam"),
        ({"size": "ten"}, "demo.size is 'ten' (str); expected an integer"),
        ({"size": True}, "demo.size is True (bool); expected an integer"),
        ({"names": "a,b"}, "demo.names is 'a,b' (str); expected a list of a string"),
        ({"names": ["a", 3]}, "demo.names[1] is 3 (int); expected a string"),
        ({"inner": {"ratio": "x"}}, "demo.inner.ratio is 'x' (str); expected a number"),
        ({"inner": 3}, "demo.inner is 3 (int); expected a mapping"),
    ],
)
def test_bad_values_are_one_line_naming_the_key(group, message):
    with pytest.raises(BabelforgeError) as error:
        load_config(Demo, {"demo": group})
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_int_is_accepted_where_a_number_is_expected_and_none_where_optional():
    config = build(Demo, {"limit": None, "inner": {"ratio": 1}}, "demo")
    assert config.inner.ratio == 1.0 and isinstance(config.inner.ratio, float) and config.limit is None


def test_unknown_path_name_is_rejected():
    with pytest.raises(BabelforgeError, match="unknown key paths.lables"):
        load_config(Demo, {"paths": {"lables": "x"}})


def test_unknown_profile_is_rejected():
    with pytest.raises(BabelforgeError, match="profile is 'ful'"):
        load_config(Demo, {"profile": "ful"})


def test_describe_lists_every_setting_with_default_and_help():
    text = describe(Demo)
    assert "demo.size (int, default 10): how many" in text
    assert "demo.inner.beams (int, default 4): beam width" in text
    assert "paths" not in text and "profile" not in text


def test_as_params_keeps_the_own_group_only():
    assert as_params(Demo()) == {"size": 10, "names": ["a"], "limit": None, "inner": {"beams": 4, "ratio": 0.5}}


def test_set_overrides_parse_yaml_values():
    params = override({"demo": {"size": 1}}, ["demo.size=5", "demo.names=[x, y]", "paths.labels=l.parquet"])
    assert params == {"demo": {"size": 5, "names": ["x", "y"]}, "paths": {"labels": "l.parquet"}}
    with pytest.raises(BabelforgeError, match="expected group.key=value"):
        override({}, ["demo.size"])


def test_every_path_of_params_yaml_is_a_known_path(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    paths = load_config(Paths, params, "paths")
    assert paths == Paths(), "params.yaml's paths group and the Paths defaults disagree"


def test_stage_cli_reports_a_typo_in_its_group_in_one_line(tmp_path, repo_root, capsys):
    params = yaml.safe_load((repo_root / "params.yaml").read_text())
    params["labels"]["min_clases"] = 3
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    assert cli(["labels", "--params", str(path)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("babelforge labels: error: params.yaml: unknown key labels.min_clases")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "value, problem",
    [
        ("a: b: c", "mapping values are not allowed here"),
        ("`x`", "found character '`' that cannot start any token"),
        ("!!python/object/apply:os.system ['true']", "could not determine a constructor for the tag"),
    ],
)
def test_a_set_value_that_is_not_yaml_is_one_line(value, problem):
    with pytest.raises(BabelforgeError) as error:
        override({"labels": {}}, [f"labels.min_classes={value}"])
    message = str(error.value)
    assert message.startswith(f"--set labels.min_classes: {value!r} is not a YAML value ({problem}")
    assert "\n" not in message and message.endswith("""quote a text: --set 'labels.min_classes="..."'""")
