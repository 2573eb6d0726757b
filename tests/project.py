"""Throwaway copies of the project for tests that run real `git` and `dvc` commands.

Shared by every test area that checks DVC behaviour (what reruns, what is skipped, push/pull).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
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
