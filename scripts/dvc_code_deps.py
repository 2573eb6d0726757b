"""Write each dvc.yaml stage's code deps: the files its command's module imports, and nothing else.

A stage reruns when a file it runs changes, and only then: a change to the Ray runner reruns the
sharded stages (and what reads their outputs), a change to the HTTP client the stages that fetch.
The files are the import closure of the stage's module (babelforge.commands names it), followed
through every import with `ast` (tests/imports.py), plus the dataset specs a stage resolves by
name from the registry (the audit reads every spec and runs each spec's audit section reader; a
card reads its own, whose area folder the card's foreach item names). The command line itself
(cli.py, the command table) is left out: it parses and dispatches, it does not decide what a
stage writes.

    python scripts/dvc_code_deps.py          # rewrite dvc.yaml's code deps in place
    python scripts/dvc_code_deps.py --check  # exit 1, naming the stages, when dvc.yaml is stale

In dvc.yaml, a stage's code deps are the `deps:` entries under `builders/` or `eval/`; they are
written last in the list, after the line `CODE_MARKER`. tests/test_dvc_deps.py checks the file.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from babelforge.commands import COMMANDS  # noqa: E402
from babelforge.core.datasets import REGISTRY, specs  # noqa: E402
from babelforge.eval.families import FAMILIES  # noqa: E402
from tests.imports import repo_files_run_by  # noqa: E402

CODE_MARKER = "# code: the files the stage's module imports (scripts/dvc_code_deps.py writes them)"
CODE_FOLDERS = ("builders/", "eval/")
# Stages that resolve every registered dataset spec by name (not an import `ast` can see).
READS_EVERY_SPEC = {"audit"}
# The card resolves its own spec by name: the spec's area folders are the foreach item's `area` and
# `uses` deps (a template takes a fixed list), the plumbing the specs run is listed here as files.
READS_ITS_SPEC = {"card"}
# A stage that loads models runs every family's module, found by name (babelforge.eval.families): a
# local folder's family is the first whose detector accepts its files, so each family's code runs.
LOADS_MODELS = REPO / "eval" / "models.py"
_STAGE = re.compile(r"^  ([\w@-]+):\s*$")
_ENTRY = re.compile(r"^(\s+)- (.+?)\s*$")


def stage_command(stage_lines: list[str]) -> str | None:
    """`babelforge <name>` of a stage's `cmd:` line (a foreach stage's `do: cmd:` too)."""
    for line in stage_lines:
        match = re.match(r"^\s+cmd:\s*(.+)$", line)
        if match:
            words = shlex.split(match.group(1))
            return words[words.index("babelforge") + 1]
    return None


def code_files(command: str) -> list[str]:
    """Repo-relative files the command's stage runs, sorted."""
    roots = [COMMANDS[command].module]
    if command in READS_EVERY_SPEC:
        roots += [target.split(":")[0] for target in REGISTRY.values()]
        # and the audit section readers the specs name, in their areas (builders/<area>/audit.py)
        roots += [found.audit.reader.split(":")[0] for found in specs() if found.audit and found.audit.reader]
    files: set[Path] = set()
    for root in roots:
        files |= set(repo_files_run_by(root))
    if LOADS_MODELS in files:
        for entry in FAMILIES.values():
            files |= set(repo_files_run_by(entry.loader.split(":")[0]))
    if command in READS_ITS_SPEC:
        for target in REGISTRY.values():
            files |= {
                path
                for path in repo_files_run_by(target.split(":")[0])
                if path.relative_to(REPO).parts[:2] == ("builders", "core") or path == REPO / "builders" / "__init__.py"
            }
    return sorted(path.relative_to(REPO).as_posix() for path in files)


def is_code(entry: str) -> bool:
    return entry.startswith(CODE_FOLDERS) or f"{entry}/" in CODE_FOLDERS


def rewrite_stage(stage_lines: list[str], files: list[str]) -> list[str]:
    """The stage's lines with its code deps replaced by `files`, after the marker, last in `deps:`."""
    start = next((i for i, line in enumerate(stage_lines) if re.match(r"^\s+deps:\s*$", line)), None)
    if start is None:
        raise SystemExit(f"dvc.yaml: stage without a block-style `deps:` list:\n{''.join(stage_lines[:2])}")
    indent = re.match(r"^(\s*)", stage_lines[start]).group(1) + "  "
    end = start + 1
    while end < len(stage_lines) and stage_lines[end].startswith(indent) and stage_lines[end].strip()[:1] in "-#":
        end += 1
    kept = [
        line
        for line in stage_lines[start + 1 : end]
        if line.strip() != CODE_MARKER and not ((m := _ENTRY.match(line)) and is_code(m.group(2)))
    ]
    code = [f"{indent}{CODE_MARKER}\n", *(f"{indent}- {path}\n" for path in files)]
    return stage_lines[: start + 1] + kept + code + stage_lines[end:]


def generate(text: str) -> str:
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if _STAGE.match(line)]
    out = lines[: starts[0]] if starts else lines
    for number, start in enumerate(starts):
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        stage = lines[start:end]
        command = stage_command(stage)
        out += rewrite_stage(stage, code_files(command)) if command else stage
    return "".join(out)


def stale_stages(text: str, generated: str) -> list[str]:
    def by_stage(content: str) -> dict[str, str]:
        parts = re.split(r"(?m)^  ([\w@-]+):\s*$", content)
        return dict(zip(parts[1::2], parts[2::2]))

    old, new = by_stage(text), by_stage(generated)
    return sorted(name for name in new if old.get(name) != new[name])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stages whose code deps are stale")
    args = parser.parse_args(argv)
    path = REPO / "dvc.yaml"
    text = path.read_text(encoding="utf-8")
    generated = generate(text)
    stale = stale_stages(text, generated)
    if args.check:
        if stale:
            print(f"dvc.yaml: stale code deps in {', '.join(stale)}; run python scripts/dvc_code_deps.py")
            return 1
        print("dvc.yaml: every stage's code deps are its import closure")
        return 0
    if stale:
        path.write_text(generated, encoding="utf-8")
    print(f"dvc.yaml: {len(stale)} stages rewritten" + (f" ({', '.join(stale)})" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
