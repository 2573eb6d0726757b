"""What a writer leaves beside its target while it works, and clearing what a dead writer left.

A writer works in a temporary file or folder beside its target, named `.<name>.<pid>.<random>.tmp`
(`.old` for a copy it keeps aside), so a later run can tell a dead writer's leftovers (its pid is not
running) from a live one's and remove them. Atomic writes (babelforge.core.io) and the CLI's locks and
guard (babelforge.core.locks, babelforge.core.output_guard) share this one naming rule.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

# what a writer leaves beside its target while it works: `.<name>.<pid>.<random>.tmp|old`
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.(?:tmp|old)$")
_LEGACY_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.(?:tmp|old)$")  # before pids were in the name


def temp_prefix(target: Path) -> str:
    """The start of the name of a temporary file or folder this process writes beside `target`."""
    return f".{target.name}.{os.getpid()}."


def is_temp_name(name: str) -> bool:
    """Whether a file name is a writer's temporary file or folder (a live writer's or a dead one's)."""
    return bool(_LEFTOVER.match(name) or _LEGACY_LEFTOVER.match(name))


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_stale_leftover(path: Path) -> bool:
    """A temp file or folder of a writer that is gone (its pid is not running), or from before pids."""
    match = _LEFTOVER.match(path.name)
    if match:
        return not _pid_alive(int(match["pid"]))
    return bool(_LEGACY_LEFTOVER.match(path.name))


def clear_leftovers(path: str | os.PathLike, recursive: bool = False) -> int:
    """Remove dead writers' temp files beside `path` (and inside it, when it is a folder and
    `recursive`); count them. Live writers' temps are left alone."""
    target = Path(path)
    candidates = list(target.parent.glob(f".{_glob_escape(target.name)}.*")) if target.parent.is_dir() else []
    if recursive and target.is_dir():
        candidates += [item for item in target.rglob(".*") if item.name.endswith((".tmp", ".old"))]
    stale = [item for item in candidates if is_stale_leftover(item)]
    for item in stale:
        _remove_leftover(item)
    return len(stale)


def _remove_leftover(item: Path) -> None:
    if item.is_dir() and not item.is_symlink():
        shutil.rmtree(item, ignore_errors=True)
    else:
        item.unlink(missing_ok=True)


_CLEARED_FOLDERS: set[str] = set()  # folders this process has cleared of dead writers' leftovers


def clear_folder_leftovers_once(folder: Path) -> None:
    """Remove dead writers' temp files and folders in `folder`, once per process: they are left by a
    process that is gone, and a folder scanned at each write made a stage writing 100,000 files into one
    folder quadratic (the BabelNet cache of the full profile: 91 % of the `senses` stage's time)."""
    key = os.path.abspath(folder)
    if key in _CLEARED_FOLDERS or not os.path.isdir(key):
        return
    with os.scandir(key) as entries:
        stale = [
            Path(entry.path) for entry in entries if entry.name.startswith(".") and is_stale_leftover(Path(entry.path))
        ]
    for item in stale:
        _remove_leftover(item)
    _CLEARED_FOLDERS.add(key)


def _glob_escape(name: str) -> str:
    """`name` with glob's special characters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", name)
