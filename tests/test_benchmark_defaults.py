"""Every benchmark the docs name exists, explains itself with --help, and shows each size's default.

A plain `python benchmarks/<name>.py` is what a reader pastes, so its size must be stated where the
reader looks (--help) and bigger runs are flags. The benchmarks' figures are never asserted here; the
slow tests only run the cheapest defaults end to end and check the outcome each one promises.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

# Run inside the benchmark's own process: the parser main() builds is read when it parses, and the
# process exits before the benchmark starts (no work, no files written).
READ_PARSER = """
import argparse, json, os, runpy, sys
def read(parser, *args, **kwargs):
    formatter = parser._get_formatter()
    options = [
        {"option": action.option_strings[-1], "default": action.default,
         "help": formatter._expand_help(action) if action.help else ""}
        for action in parser._actions
        if action.option_strings and action.help != argparse.SUPPRESS
        and isinstance(action.default, (int, float)) and not isinstance(action.default, bool)
    ]
    print(json.dumps(options))
    sys.exit(0)
argparse.ArgumentParser.parse_args = read
sys.argv = [sys.argv[1]]
sys.path.insert(0, os.path.dirname(sys.argv[0]))  # as `python benchmarks/<name>.py` sets it
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def named_benchmarks() -> list[str]:
    """Every benchmarks/<name>.py that README.md or a docs page names."""
    names = set()
    for page in PAGES:
        names.update(re.findall(r"benchmarks/([a-z_]+)\.py", page.read_text(encoding="utf-8")))
    return sorted(names)


NAMED = named_benchmarks()


def run_script(*args: str, timeout: int) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_the_docs_name_the_benchmarks_and_each_exists():
    assert len(NAMED) >= 15, NAMED
    missing = [name for name in NAMED if not (REPO / "benchmarks" / f"{name}.py").is_file()]
    assert not missing, f"the docs name benchmarks that do not exist: {missing}"


@pytest.mark.parametrize("name", NAMED)
def test_help_explains_and_starts_nothing(name):
    script = REPO / "benchmarks" / f"{name}.py"
    before = script.parent.joinpath("results").stat().st_mtime_ns
    result = run_script(str(script), "--help", timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("usage: "), result.stdout[:500]
    # the module docstring as written (benchmarks/bench_cli.py): its first paragraph, line breaks kept
    summary = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))).split("\n\n")[0]
    assert summary in result.stdout, result.stdout[:1000]
    # an unset option or an off switch says nothing about its default
    said = " ".join(result.stdout.split())
    assert "(default: None)" not in said and "(default: False)" not in said, result.stdout
    assert script.parent.joinpath("results").stat().st_mtime_ns == before  # nothing measured nor saved


def shown(default: int | float) -> set[str]:
    return {str(default), f"{default:,}", f"{default:_}"}


@pytest.mark.parametrize("name", NAMED)
def test_help_shows_every_size_default(name):
    result = run_script("-c", READ_PARSER, str(REPO / "benchmarks" / f"{name}.py"), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    options = json.loads(lines[-1]) if lines else []
    unstated = [
        f"{option['option']} (default {option['default']})"
        for option in options
        if not any(text in option["help"] for text in shown(option["default"]))
    ]
    assert not unstated, f"benchmarks/{name}.py --help does not show: {unstated}"


@pytest.mark.parametrize(
    ("name", "choices"),
    [
        ("full_rehearsal", ["--scale 1x", "--scale 10x", "--report"]),
        ("captions_scale", ["--only", "--all"]),
        ("real_size_rates", ["--only clip", "--only nllb", "--all"]),
    ],
)
def test_a_benchmark_of_minutes_run_plainly_says_what_to_choose(name, choices):
    result = run_script(f"benchmarks/{name}.py", timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    message = result.stderr.strip().splitlines()[-1]
    assert message.startswith(f"{name}.py: error: choose"), message
    assert all(choice in message for choice in choices) and "minutes" in message, message
    assert result.stdout == ""


@pytest.mark.slow
def test_babelnet_requests_by_default_asks_for_a_few_classes_and_the_warm_cache_makes_none():
    result = run_script("benchmarks/babelnet_requests.py", "--raw", "0", timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "20 ImageNet classes x 298 languages" in result.stdout
    warm = re.search(r"warm requests: (\d+) \(must be 0\)", result.stdout)
    assert warm and warm.group(1) == "0", result.stdout


@pytest.mark.slow
def test_langid_rank_by_default_ranks_its_texts_the_same_both_ways():
    result = run_script("benchmarks/langid_rank.py", "--texts", "400", timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search(r"rank 400 texts .* 0 of 400 score vectors differ", result.stdout), result.stdout
