"""Lint, format and dependency checks, so the README's test command (and CI) runs them.

The rule set is pyproject.toml's `[tool.ruff]`; `[tool.deptry]` checks that the declared
dependencies equal what the code imports. Run the same by hand:
`ruff check . && ruff format --check . && deptry .`
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.imports import REPO

BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess:
    tool = BIN / command[0]
    if not tool.exists():
        pytest.fail(f"{command[0]} is not installed beside {sys.executable}: run scripts/setup.sh")
    return subprocess.run(
        [str(tool), *command[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PATH": str(BIN), "NO_COLOR": "1", "HOME": str(Path.home())},
    )


def test_ruff_finds_nothing():
    result = _run("ruff", "check", "--no-cache", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_every_file_is_formatted():
    result = _run("ruff", "format", "--no-cache", "--check", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_declared_dependencies_equal_what_the_code_imports():
    result = _run("deptry", ".")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_the_rules_catch_a_function_level_import_of_a_light_module(tmp_path):
    """PLC0415 with the heavy-library exemption: `import json` in a function is flagged, `import torch` is not."""
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    import json\n    import torch\n\n    return json, torch\n", encoding="utf-8")
    result = _run(
        "ruff",
        "check",
        "--no-cache",
        "--config",
        str(REPO / "pyproject.toml"),
        "--output-format",
        "concise",
        str(source),
    )
    flagged = [line for line in result.stdout.splitlines() if "PLC0415" in line]
    assert len(flagged) == 1 and ":2:" in flagged[0], result.stdout
