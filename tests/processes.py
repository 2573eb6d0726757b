"""Finding the processes a run started by a setting in their environment, wherever they went.

Ray's nodes, workers and agents put themselves in process groups and sessions of their own, so
killing the group of the process that started them misses them; every one of them inherits that
process's environment, so a setting (NAME=value) given to it finds them all.
"""

from __future__ import annotations

from pathlib import Path


def processes_with_setting(setting: str) -> dict[int, str]:
    """pid -> the first 120 characters of the command of every process whose environment holds
    `setting` (NAME=value), whatever name it gave itself."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if setting in (entry / "environ").read_bytes().decode(errors="replace").split("\0"):
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
        except OSError:  # gone meanwhile, or another user's
            continue
    return found
