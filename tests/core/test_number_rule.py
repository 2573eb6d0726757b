"""The one number rule: every number a user gives (params.yaml, `--set`, a flag) is finite and in the
range declared beside its setting; one line naming the key or flag otherwise (issue 46)."""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from babelforge.cli import main as cli
from babelforge.core.config import describe, load_config, override, setting, settings
from babelforge.core.errors import BabelforgeError
from babelforge.core.numbers import Bounds, number_flag, number_problem
from babelforge.core.stage_settings import flag_argument, params_groups
from babelforge.core.stage_table import table
from babelforge.core.stages import load


@dataclass(frozen=True)
class Runner:
    timeout: float = setting(20.0, "seconds", above=0)


@dataclass(frozen=True)
class Numbers:
    GROUP = "numbers"
    share: float = setting(0.05, "a share", minimum=0, maximum=1)
    count: int = setting(10, "a count", minimum=1)
    limit: int | None = setting(None, "an optional count", minimum=1)
    floors: dict[str, float] = setting({}, "per-key shares", minimum=0, maximum=1)
    seeds: list[int] = setting([0], "seeds", minimum=0)
    free: float = setting(1.5, "any finite number")
    rules: typing.Any = setting({}, "a free-form rule table")
    runner: Runner = setting(Runner(), "nested")


def loaded(group: dict) -> Numbers:
    return load_config(Numbers, {"profile": "sample", "numbers": group})


@pytest.mark.parametrize(
    "group, message",
    [
        ({"share": math.nan}, "numbers.share is nan; it must be a finite number between 0 and 1"),
        ({"share": math.inf}, "numbers.share is inf; it must be a finite number between 0 and 1"),
        ({"share": -1}, "numbers.share is -1.0; it must be between 0 and 1"),
        ({"share": 1.5}, "numbers.share is 1.5; it must be between 0 and 1"),
        ({"count": 0}, "numbers.count is 0; it must be at least 1"),
        ({"limit": 0}, "numbers.limit is 0; it must be at least 1"),
        (
            {"floors": {"deu_Latn": math.nan}},
            "numbers.floors.deu_Latn is nan; it must be a finite number between 0 and 1",
        ),
        ({"floors": {"deu_Latn": 2}}, "numbers.floors.deu_Latn is 2.0; it must be between 0 and 1"),
        ({"seeds": [0, -3]}, "numbers.seeds[1] is -3; it must be at least 0"),
        ({"free": -math.inf}, "numbers.free is -inf; it must be a finite number"),
        ({"rules": {"a": {"min": math.nan}}}, "numbers.rules.a.min is nan; it must be a finite number"),
        ({"runner": {"timeout": -5}}, "numbers.runner.timeout is -5.0; it must be above 0"),
        ({"runner": {"timeout": 0}}, "numbers.runner.timeout is 0.0; it must be above 0"),
        ({"runner": {"timeout": math.nan}}, "numbers.runner.timeout is nan; it must be a finite number above 0"),
    ],
)
def test_a_number_outside_its_range_or_not_finite_is_one_line_naming_the_key(group, message):
    with pytest.raises(BabelforgeError) as error:
        loaded(group)
    assert str(error.value) == f"params.yaml: {message}"


def test_numbers_at_the_edges_of_their_range_are_kept():
    config = loaded({"share": 1, "count": 1, "limit": 1, "floors": {"x": 0}, "seeds": [0], "runner": {"timeout": 1e-9}})
    assert (config.share, config.count, config.limit, config.floors, config.runner.timeout) == (
        1.0,
        1,
        1,
        {"x": 0},
        1e-9,
    )


@pytest.mark.parametrize("text", [".nan", ".NaN", ".inf", "-.inf", "-.Inf"])
def test_yaml_nan_and_infinity_through_set_are_refused_like_in_params_yaml(text):
    params = override({"profile": "sample"}, [f"numbers.free={text}"])
    with pytest.raises(BabelforgeError, match=r"numbers.free is -?(nan|inf); it must be a finite number$"):
        load_config(Numbers, params)


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_is_kept_exactly_when_it_is_finite_and_in_range(value):
    """The rule's verdict is the arithmetic one: no float slips through a comparison NaN makes false."""
    ok = math.isfinite(value) and 0 <= value <= 1
    try:
        config = loaded({"share": value})
    except BabelforgeError as error:
        assert not ok and str(error).startswith("params.yaml: numbers.share is ")
    else:
        assert ok and config.share == value


def test_a_range_is_declared_once_and_shown_in_help():
    assert "numbers.share (float, default 0.05, between 0 and 1): a share" in describe(Numbers)
    assert "numbers.runner.timeout (float, default 20.0, above 0): seconds" in describe(Numbers)
    assert "numbers.free (float, default 1.5): any finite number" in describe(Numbers)


def test_bounds_read_as_a_user_writes_them():
    assert [
        str(b) for b in (Bounds(0, 1), Bounds(1), Bounds(above=0), Bounds(maximum=3), Bounds(above=0, maximum=1))
    ] == [
        "between 0 and 1",
        "at least 1",
        "above 0",
        "at most 3",
        "above 0 and at most 1",
    ]
    assert str(Bounds(minimum=536870912)) == "at least 536870912"
    assert number_problem(0.5, Bounds(0, 1)) is None and number_problem(math.nan) == "it must be a finite number"


def numeric(kind) -> bool:
    return any(part in str(kind) for part in ("int", "float")) or kind in (int, float)


def declared_settings() -> list[tuple[str, object]]:
    """(key, its declared bounds) of every numeric setting of every params.yaml group."""
    found = []
    for group, (cls, _) in params_groups().items():
        for item in settings(cls, group):
            if numeric(item.type):
                found.append((item.key, item.bounds))
    return found


def test_every_numeric_setting_of_every_stage_declares_its_range():
    """A new count, share or timeout without `minimum`/`maximum`/`above` fails here, not in a build."""
    found = declared_settings()
    assert len(found) > 60  # every group is walked: a stage's own and the ones it takes from elsewhere
    assert [key for key, bounds in found if bounds is None] == []


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("xm3600.max_script_mismatch", ".nan", "it must be a finite number between 0 and 1"),
        ("xm3600.max_script_mismatch", "-1", "it must be between 0 and 1"),
        ("labels.precision_floor.default", ".nan", "it must be a finite number between 0 and 1"),
        ("captions.runner.connect_timeout", "-5", "it must be above 0"),
        ("captions.runner.connect_timeout", ".nan", "it must be a finite number above 0"),
        ("eval.runner.connect_timeout", "-1", "it must be above 0"),
    ],
)
def test_the_settings_the_issue_found_open_are_refused(repo_root, key, value, message):
    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    group = next(name for name in sorted(params_groups(), key=len, reverse=True) if key.startswith(name + "."))
    cls = params_groups()[group][0]
    with pytest.raises(BabelforgeError, match=rf"^params.yaml: {key} is [-.\w]+; {message}$"):
        load_config(cls, override(params, [f"{key}={value}"]), group)


def test_the_project_params_keep_the_rule(repo_root):
    params = yaml.safe_load((repo_root / "params.yaml").read_text(encoding="utf-8"))
    for profile in ("sample", "full"):
        for group, (cls, _) in params_groups().items():
            load_config(cls, {**params, "profile": profile}, group)


@pytest.mark.parametrize(
    "kind, bounds, text, message",
    [
        (float, Bounds(above=0), "nan", "--x is nan; it must be a finite number above 0"),
        (float, Bounds(above=0), "-inf", "--x is -inf; it must be a finite number above 0"),
        (float, Bounds(above=0), "0", "--x is 0.0; it must be above 0"),
        (float, Bounds(above=0), "fast", "--x 'fast': not a number above 0"),
        (int, Bounds(minimum=1), "nan", "--x 'nan': not an integer at least 1"),
        (int, Bounds(minimum=1), "1.5", "--x '1.5': not an integer at least 1"),
        (int, Bounds(minimum=1), "0", "--x is 0; it must be at least 1"),
    ],
)
def test_a_numeric_flag_keeps_the_rule_in_one_line_naming_it(kind, bounds, text, message):
    with pytest.raises(BabelforgeError) as error:
        number_flag(kind, "--x", bounds)(text)
    assert str(error.value) == message
    assert number_flag(kind, "--x", bounds)("2") == 2


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval_paper", "--plan", "--images-per-second", "nan"], "--images-per-second is nan; it must be a finite"),
        (["eval_paper", "--plan", "--texts-per-second", "0"], "--texts-per-second is 0.0; it must be above 0"),
        (["geo_pool", "--per-language", "0"], "--per-language is 0; it must be at least 1"),
        (["geo_pool", "--per-language", "inf"], "--per-language 'inf': not an integer at least 1"),
        (["eval_correlate", "a.tsv", "--x", "a", "--y", "b", "--n-boot", "0"], "--n-boot is 0; it must be at least 1"),
    ],
)
def test_the_cli_refuses_a_flag_breaking_the_rule_in_one_line(argv, message, capsys):
    assert cli(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"babelforge {argv[0]}: error: {message}")
    assert len(err.splitlines()) == 1


def test_every_numeric_flag_of_every_command_keeps_the_rule():
    """A flag derived from a setting carries the setting's range: none is a bare int or float."""
    checked = []
    for name in table():
        stage = load(name)
        for flag in stage.flags:
            kind = flag_argument(stage, flag)[1].get("type")
            assert kind not in (int, float), f"{name} {flag}: a bare {kind.__name__} takes nan"
            if getattr(kind, "__name__", None) in ("int", "float"):
                with pytest.raises(BabelforgeError, match=rf"^{flag} "):
                    kind("nan")
                checked.append(f"{name} {flag}")
    assert "geo_pool --per-language" in checked
