"""Throwaway copies of the project for tests that run real `git` and `dvc` commands.

Shared by every test area that checks DVC behaviour (what reruns, what is skipped, push/pull).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def command_env(pythonpath: Path | None = None) -> dict[str, str]:
    """The environment for subprocesses: this interpreter's bin first on PATH (so `babelforge`
    and `dvc` are the project's), DVC offline, a git identity."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(pythonpath or REPO),
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.org",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.org",
    }


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 600) -> str:
    """Run a command; assert it succeeded (showing its output if not); return stdout + stderr."""
    result = subprocess.run(command, cwd=cwd, env=env or command_env(), capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


def copy_project(dest: Path) -> Path:
    """A git repository at `dest` holding the working tree's files (tracked and untracked, not
    ignored), committed once; `.dvc/` comes along, so it is a DVC project too."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in files:
        source = REPO / name
        if source.is_file() and not source.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    env = command_env(dest)
    run(["git", "init", "-q"], dest, env)
    run(["git", "add", "-A"], dest, env)
    run(["git", "commit", "-qm", "copy"], dest, env)
    return dest


def tree_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by its path relative to it: what "byte-identical" compares."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def guide_block(page: str, after: str) -> str:
    """The first ```bash block of docs/guides/<page> after the text `after`, unindented: a guide's
    commands, to run verbatim (`bash -ec`)."""
    text = (REPO / "docs" / "guides" / page).read_text(encoding="utf-8")
    rest = text[text.index(after) :]
    start = rest.index("```bash\n") + len("```bash\n")
    block = rest[start : rest.index("```", start)]
    return textwrap.dedent(block)


def keep_built_stages(copy: Path, env: dict[str, str]) -> set[str]:
    """Make the copy a built checkout of the stages built in it (their outputs are there): the
    pipeline and lock copied from the working tree also hold the others, whose outputs this copy's
    cache never had, and `dvc checkout` (a guide's undo step) fails on an output it cannot restore.
    Returns the stages kept."""
    import json

    import yaml

    status = json.loads(run(["dvc", "status", "--json"], copy, env).splitlines()[-1])
    unbuilt = {
        stage
        for stage, changes in status.items()
        for change in changes
        if isinstance(change, dict) and {"deleted", "not in cache"} & set((change.get("changed outs") or {}).values())
    }
    pipeline = yaml.safe_load((copy / "dvc.yaml").read_text(encoding="utf-8"))
    kept = {}
    for name, body in pipeline["stages"].items():
        if "foreach" in body:
            items = {key: item for key, item in body["foreach"].items() if f"{name}@{key}" not in unbuilt}
            if items:
                kept[name] = {**body, "foreach": items}
        elif name not in unbuilt:
            kept[name] = body
    (copy / "dvc.yaml").write_text(yaml.safe_dump({"stages": kept}, sort_keys=False), encoding="utf-8")
    path = copy / "dvc.lock"
    lock = yaml.safe_load(path.read_text(encoding="utf-8"))
    lock["stages"] = {name: body for name, body in lock["stages"].items() if name not in unbuilt}
    path.write_text(yaml.safe_dump(lock, sort_keys=False), encoding="utf-8")
    return set(lock["stages"])
