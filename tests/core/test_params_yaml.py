"""The one params loader (`ParamsLoader`): a key written twice is refused naming both lines, an alias
bomb (top level, inside a group, in `--set`) is one line at once and at no memory, and no YAML text
or structure a user writes makes it raise anything but the one-line error (issue 46)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from babelforge.core.config import load_config, override, setting
from babelforge.core.errors import BabelforgeError
from babelforge.core.params import MAX_DEPTH, MAX_NODES, load_params, load_yaml_text, read_yaml


def params_file(tmp_path, text: str):
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def refused(tmp_path, text: str) -> str:
    with pytest.raises(BabelforgeError) as error:
        load_params(params_file(tmp_path, text))
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_key_written_twice_is_refused_naming_both_lines(tmp_path):
    text = "profile: sample\nlabels:\n  min_classes: 10\n  ranking: first\n  min_classes: 500\n"
    assert refused(tmp_path, text) == (
        f"{tmp_path}/params.yaml:5:3: YAML refused: key 'min_classes' appears twice (lines 3 and 5); keep one"
    )


@pytest.mark.parametrize(
    "text, lines",
    [
        ("profile: sample\nprofile: full\n", "lines 1 and 2"),
        ("profile: sample\nx: {a: 1, a: 2}\n", "lines 2 and 2"),  # a flow mapping, one line
        ("profile: sample\nx:\n  - a: 1\n    b: 2\n    'a': 3\n", "lines 3 and 5"),  # quoted or not, one key
    ],
)
def test_a_duplicate_key_anywhere_is_refused(tmp_path, text, lines):
    assert f"appears twice ({lines})" in refused(tmp_path, text)


def test_the_same_key_in_different_mappings_and_merge_keys_are_kept(tmp_path):
    text = "profile: sample\nbase: &b {size: 1}\na: {size: 2}\nc:\n  <<: *b\n  other: 3\n"
    assert load_params(params_file(tmp_path, text))["c"] == {"size": 1, "other": 3}


def bomb(levels: int, indent: str = "") -> str:
    """A 'billion laughs': each level a list of ten aliases of the one before (10**levels values)."""
    lines = [f"{indent}l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, levels):
        lines.append(f"{indent}l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 10)}]")
    return "\n".join(lines) + "\n"


def peak_rss_of(code: str) -> tuple[float, int, str]:
    """(seconds, peak RSS in MiB, stderr) of `code` run in a fresh Python that prints its own peak
    RSS last (the bomb's cost measured apart from the test's)."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code + PEAK], capture_output=True, text=True, timeout=60)
    return time.monotonic() - start, int(done.stdout.split()[-1]) // 1024, done.stderr


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking test process (a gigabyte
# after the registry tests), VmHWM starts afresh with the new program
PEAK = "\nprint(next(line for line in open('/proc/self/status') if line.startswith('VmHWM')).split()[1])\n"


@pytest.mark.parametrize("where", ["top", "group"])
def test_an_alias_bomb_is_one_line_at_once_and_at_no_memory(tmp_path, where):
    body = bomb(9) if where == "top" else "labels:\n" + bomb(9, "  ")
    path = params_file(tmp_path, "profile: sample\n" + body)
    start = time.monotonic()
    message = refused(tmp_path, path.read_text())
    assert time.monotonic() - start < 1.0
    assert f"aliases expand to more than {MAX_NODES:,} values (an alias bomb)" in message
    code = textwrap.dedent(f"""
        from babelforge.core.params import load_params
        from babelforge.core.errors import BabelforgeError
        import sys
        try:
            load_params({str(path)!r})
        except BabelforgeError as error:
            print(error, file=sys.stderr)
    """)
    seconds, peak, stderr = peak_rss_of(code)
    assert "alias bomb" in stderr and peak < 200, (seconds, peak)  # the 10**9 values would be gigabytes


def test_an_alias_bomb_in_a_set_value_is_one_line():
    with pytest.raises(
        BabelforgeError, match=r"^--set labels.min_classes: '.{57}\.\.\.' is not a YAML value \(its aliases"
    ):
        override({"labels": {}}, ["labels.min_classes=" + "{" + bomb(7).replace("\n", ", ").rstrip(", ") + "}"])


def test_aliases_within_the_bound_load_as_plain_yaml(tmp_path):
    text = "profile: sample\n" + bomb(4)  # 10,000 values
    assert load_params(params_file(tmp_path, text)) == yaml.safe_load(text)


@pytest.mark.parametrize(
    "text, problem",
    [
        ("profile: sample\nx: &a [*a]\n", "an alias inside its own anchor (a cycle)"),
        ("profile: sample\nx: &a {k: [1, *a]}\n", "an alias inside its own anchor (a cycle)"),
        (
            "profile: sample\nx: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n",
            f"nested more than {MAX_DEPTH}",
        ),
        ("profile: sample\nx: " + "[" * 5000 + "\n", f"nested more than {MAX_DEPTH}"),  # no RecursionError
    ],
)
def test_cycles_and_deep_nesting_are_one_line(tmp_path, text, problem):
    assert problem in refused(tmp_path, text)


def test_the_project_params_load_as_before(repo_root):
    text = (repo_root / "params.yaml").read_text(encoding="utf-8")
    assert read_yaml(repo_root / "params.yaml") == yaml.safe_load(text)


# --- fuzz: random text and random structures never raise anything but the one-line error, never hang


YAML_PIECES = st.sampled_from(
    [
        "profile: sample\n",
        "labels:\n",
        "  min_classes: ",
        "10",
        ".nan",
        "-.inf",
        "&a ",
        "*a",
        "*b",
        "&b ",
        "[",
        "]",
        "{",
        "}",
        ", ",
        ": ",
        "\n",
        "  ",
        "- ",
        "<<: ",
        "'",
        '"',
        "!!python/object:os.system ",
        "!!str ",
        "? ",
        "|\n",
        "#",
        "\t",
        "%YAML 1.1\n",
        "---\n",
        "...\n",
        "\ufeff",
        "\u202e",
        "\x00",
        "\\",
        "sample",
        "full",
    ]
)
YAML_TEXTS = st.lists(YAML_PIECES, max_size=40).map("".join) | st.text(max_size=200)


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(YAML_TEXTS)
def test_any_params_text_loads_or_is_one_line(tmp_path, text):
    path = params_file(tmp_path, text)
    try:
        data = load_params(path)
    except BabelforgeError as error:
        assert "\n" not in str(error) and str(error)
    else:
        assert isinstance(data, dict) and "profile" in data


@dataclass(frozen=True)
class Inner:
    timeout: float = setting(20.0, "seconds", above=0)
    names: list[str] = setting(["a"], "names")


@dataclass(frozen=True)
class Fuzzed:
    GROUP = "fuzzed"
    share: float = setting(0.05, "a share", minimum=0, maximum=1)
    count: int = setting(10, "a count", minimum=1)
    limit: int | None = setting(None, "an optional count", minimum=1)
    floors: dict[str, float] = setting({}, "per-key shares", minimum=0, maximum=1)
    inner: Inner = setting(Inner(), "nested")


SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
KEYS = st.sampled_from(["share", "count", "limit", "floors", "inner", "timeout", "names", "sample", "full", "x"])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4))


@settings(max_examples=300, deadline=2000)
@given(st.dictionaries(KEYS, VALUES, max_size=6), st.sampled_from(["sample", "full"]))
def test_any_group_structure_builds_or_is_one_line_and_what_builds_keeps_the_rule(group, profile):
    text = yaml.safe_dump({"profile": profile, "fuzzed": group})
    try:
        config = load_config(Fuzzed, load_yaml_text(text))
    except BabelforgeError as error:
        assert "\n" not in str(error) and "fuzzed" in str(error) and str(error).startswith("params.yaml: ")
    else:
        assert 0 <= config.share <= 1 and config.count >= 1 and (config.limit is None or config.limit >= 1)
        assert all(0 <= value <= 1 for value in config.floors.values()) and config.inner.timeout > 0


def counted_document(values: int) -> str:
    """A YAML sequence whose expansion is exactly `values` nodes (the sequence itself counted): 99 uses of
    one anchored list of 999 scalars (1,000 nodes each), then plain scalars up to the count."""
    shared = "&a [" + ", ".join(["0"] * 999) + "]"
    rest = values - 1 - 99 * 1000
    assert rest >= 0
    return "[" + ", ".join([shared, *["*a"] * 98, *["1"] * rest]) + "]"


def test_the_node_bound_is_exact_counting_every_alias_use():
    assert len(load_yaml_text(counted_document(MAX_NODES))) == 99 + (MAX_NODES - 1 - 99_000)
    with pytest.raises(yaml.YAMLError, match=f"expand to more than {MAX_NODES:,} values"):
        load_yaml_text(counted_document(MAX_NODES + 1))


def test_the_depth_bound_is_exact_and_does_not_drift_over_siblings():
    def nested(depth: int) -> str:  # the root sequence at depth 1, its innermost scalar at depth `depth`
        return "[" * (depth - 1) + "0" + "]" * (depth - 1)

    assert load_yaml_text(nested(MAX_DEPTH)) is not None
    with pytest.raises(yaml.YAMLError, match=f"nested more than {MAX_DEPTH} deep"):
        load_yaml_text(nested(MAX_DEPTH + 1))
    # many shallow siblings first: the depth count must come back to where it was after each one
    siblings = "[" + ", ".join(["[[0]]"] * 200) + ", " + nested(MAX_DEPTH)[1:-1] + "]"
    with pytest.raises(yaml.YAMLError, match=f"nested more than {MAX_DEPTH} deep"):
        load_yaml_text("[" + siblings + "]")
    assert load_yaml_text(siblings) is not None
