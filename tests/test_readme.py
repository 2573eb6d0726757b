"""README and docs claims that drift when the code moves: stage names, flags, module and file references,
the metric files, the test count, and the two opening commands. What moved from the README into the docs
site is checked on its page there (tests/test_docs.py checks every page's commands and references)."""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from babelforge.cli import stage_parser
from babelforge.commands import COMMANDS
from babelforge.core.stages import load

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"
DVC = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]

OPENING = [
    "scripts/setup.sh && . .venv/bin/activate && dvc repro   # fresh machine: install, then build everything "
    "(offline `sample` profile)",
    ".venv/bin/python -m pytest -n auto                      # run the tests (and the lint)",
]


def code_blocks(text: str) -> list[list[str]]:
    """The fenced code blocks, each a list of lines (a line ending in `\\` joined with the next)."""
    blocks, current = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            if current and current[-1].endswith("\\"):
                current[-1] = current[-1][:-1] + " " + line.strip()
            else:
                current.append(line)
    return blocks


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def page(path: str) -> str:
    """A page of the docs site (docs/<path>)."""
    return (DOCS / path).read_text(encoding="utf-8")


def test_the_two_opening_commands_come_first_verbatim():
    first = code_blocks(README)[0]
    assert first == OPENING
    assert (REPO / "scripts" / "setup.sh").is_file()


def test_the_recipes_follow_the_opening_commands():
    recipes = "\n".join(code_blocks(README)[1])
    assert README.index("\n".join(code_blocks(README)[1])) < README.index("\n## ")
    for step in (
        "load_dataset(",
        "babelforge eval_zeroshot --model",
        "babelforge review import",
        "dvc exp run -S",
        "dvc metrics diff",
        "babelforge publish",
    ):
        assert step in recipes, step


def _table_names(text: str) -> set[str]:
    """The backticked names in the first column of every Markdown table row of `text`."""
    names = set()
    for line in text.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([^`]+)`", line.split("|")[1]))
    return names


def test_every_stage_in_the_pipeline_table_exists_in_the_cli_and_in_dvc_yaml():
    names = _table_names(section("Pipeline"))
    assert {"fetch", "labels", "prompts", "audit", "card@<dataset>"} <= names
    for name in names:
        stage = name.split("@")[0]
        if stage.endswith("*"):
            assert any(command.startswith(stage[:-1]) for command in COMMANDS), name
            assert any(key.startswith(stage[:-1]) for key in DVC), name
            continue
        assert stage in COMMANDS, f"README names stage {name}; babelforge has no such command"
        assert stage in DVC, f"README names stage {name}; dvc.yaml has no such stage"
        if "@" in name:
            assert "foreach" in DVC[stage], name


def test_every_command_and_model_family_in_the_evaluation_tables_exists():
    """The evaluate guide's tables: the commands, and the model families (each registered family
    documented, no other)."""
    from babelforge.eval.families import FAMILIES

    names = _table_names(page("guides/evaluate.md"))
    commands = names - set(FAMILIES)
    assert commands and all(name in COMMANDS for name in commands), commands - set(COMMANDS)
    assert names & set(FAMILIES) == set(FAMILIES)


def _visible_flags(parser: argparse.ArgumentParser) -> set[str]:
    flags = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                flags |= _visible_flags(subparser)
        elif action.help != argparse.SUPPRESS:
            flags |= set(action.option_strings)
    return flags


def command_problems(text: str) -> list[str]:
    """Every `babelforge <stage> --flag` in the code blocks of `text` that names no stage or no flag of
    it, and every `dvc repro <stage>` that names no dvc.yaml stage (tests/test_docs.py runs it on docs/**)."""
    problems = []
    for line in (line for block in code_blocks(text) for line in block):
        for match in re.finditer(r"(?:^|[\s;&|])babelforge\s+(\w+)([^#;&|]*)", line):
            stage, rest = match.groups()
            if stage not in COMMANDS:
                problems.append(f"{stage}: no such stage ({line.strip()})")
                continue
            parser = stage_parser(load(stage))
            unknown = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", rest)) - _visible_flags(parser)
            problems += [f"babelforge {stage} {flag}: no such flag" for flag in sorted(unknown)]
        for stage in re.findall(r"(?:^|[\s;&|])dvc repro ((?!-)[\w@-]+)", line):
            if stage.split("@")[0] not in DVC:
                problems.append(f"dvc repro {stage}: no such stage in dvc.yaml")
    return problems


def test_every_babelforge_command_line_uses_flags_the_stage_has():
    assert command_problems(README) == []


def missing_references(text: str) -> list[str]:
    """Every `babelforge.<module or attribute>` and repository path named in backticks in `text` that does
    not exist (tests/test_docs.py runs it on docs/**)."""
    missing = []
    for dotted in sorted(set(re.findall(r"`(babelforge\.[\w.]+)", text))):
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                target = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute, None)
        if target is None:
            missing.append(dotted)
    for path in sorted(
        set(re.findall(r"`((?:builders|eval|tests|benchmarks|scripts|resources|docs)/[\w./-]+)`", text))
    ):
        if not (REPO / path).exists():
            missing.append(path)
    return missing


def test_named_modules_functions_and_files_exist():
    assert missing_references(README) == []


def test_comparing_runs_names_every_metric_file():
    text = page("guides/compare-runs.md")
    files = [
        Path(path).name
        for stage in DVC.values()
        for entry in stage.get("metrics", [])
        for path in (entry if isinstance(entry, dict) else {entry: None})
        if path.startswith("${paths.metrics}/")
    ]
    assert files and all(f"`{name}`" in text for name in files), files
    for command in ("dvc exp run -n min-classes-20 -S labels.min_classes=20", "dvc exp show --md", "dvc metrics diff"):
        assert command in text


@pytest.mark.slow
def test_the_stated_test_count_is_within_a_fifth_of_the_collected_one():
    stated = int(re.search(r"runs every test \(about ([\d,]+)", page("contributing.md")).group(1).replace(",", ""))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    collected = int(re.search(r"(\d+) tests? collected", result.stdout).group(1))
    assert abs(stated - collected) <= 0.2 * collected, (
        f"docs/contributing.md says about {stated}; pytest collects {collected}"
    )


def test_ci_runs_the_readme_test_command():
    """CI (.ci/run) ends with exactly the README's test command."""
    ci = [line for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert ci[-1] == OPENING[1].split("#")[0].strip()


def test_the_readme_is_a_short_front_page():
    """Under 12 KB, with the pipeline graph, the stage table and links into the docs site that resolve."""
    assert len(README.encode("utf-8")) < 12 * 1024
    assert "```mermaid" in section("Pipeline") and "| `card@<dataset>` |" in section("Pipeline")
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert "docs/guides/evaluate.md" in links
    assert [link for link in links if not (REPO / link).is_file()] == []
