"""What an `--out` run wrote, so that its rerun into the same --out knows the files there are its own.

The command line (babelforge.cli, babelforge.core.runs) lists an output's files, asks git which it
tracks, and keeps a record per output in the user's cache; no stage's code depends on this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_json
from babelforge.core.leftovers import is_temp_name


def file_stats(path: str | os.PathLike) -> dict[str, tuple[int, int]]:
    """name -> (size, mtime_ns) of every file at or under `path` ("." when it is one file; {} when it is
    not there), links as themselves; writers' temp files left out (they are no one's work)."""
    root = Path(path)
    if not os.path.lexists(root):
        return {}
    if root.is_symlink() or not root.is_dir():
        stat = root.lstat()
        return {".": (stat.st_size, stat.st_mtime_ns)}
    found = {}
    for folder, folders, files in os.walk(root):
        for name in [*files, *(entry for entry in folders if os.path.islink(os.path.join(folder, entry)))]:
            item = Path(folder) / name
            if is_temp_name(name):
                continue
            stat = item.lstat()
            found[item.relative_to(root).as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return found


def git_tracked_files(path: str | os.PathLike) -> list[str]:
    """The files git tracks at or under `path` (its index, deleted ones included), relative to it ("."
    for the file itself), sorted; [] outside a git work tree or without git."""
    target = Path(os.path.realpath(path))
    folder = next((p for p in [target, *target.parents] if p.is_dir()), None)
    if folder is None:
        return []
    try:
        result = subprocess.run(
            ["git", "--literal-pathspecs", "-C", str(folder), "ls-files", "-z", "--", str(target)],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if result.returncode != 0:  # not a git work tree
        return []
    names = [folder / name for name in result.stdout.decode("utf-8", "replace").split("\0") if name]
    return sorted(
        "." if name == target else name.relative_to(target).as_posix() for name in names if name.is_relative_to(target)
    )


# The record an `--out` run keeps of each output it wrote: the command and every file it left there, so a
# rerun of that command into the same --out knows the files are its own, and any other file is someone's
# work (`not_written_by`). Records live in one folder of the user's cache (`written_records_folder`), one
# per output's real path, never beside or inside the output (a folder a user lists holds only the data).
def record_path(output: str | Path, folder: Path) -> Path:
    """The record of what a command wrote at `output` (a real path): `folder/<sha256 of the path>.json`."""
    return folder / f"{hashlib.sha256(str(output).encode('utf-8')).hexdigest()[:32]}.json"


def written_record(
    command: str, output: str | Path, files: Mapping[str, Sequence[int]], complete: bool
) -> dict[str, Any]:
    """The record of an output (a real path): the command, the files it holds (name -> [size, mtime_ns], "."
    for an output that is one file) and whether the run finished (`complete`) or is under way (it may stop
    half way)."""
    listing = {name: list(files[name]) for name in sorted(files)}
    return {"command": command, "output": str(output), "complete": complete, "files": listing}


def not_written_by(
    command: str, output: str | Path, record: Mapping[str, Any] | None, files: Mapping[str, Sequence[int]]
) -> list[str]:
    """The files of an output (a real path; its files name -> [size, mtime_ns]) that `command` did not leave
    there, sorted.

    Without a record of `command` there (none, another command's, another path's) every file is someone
    else's; a run of it that stopped half way (not `complete`) left files the record cannot list, its rerun
    resumes them; else a file the record does not list, or one changed since (size or time), is someone
    else's work.
    """
    if not files:
        return []
    if not isinstance(record, Mapping) or (record.get("command"), record.get("output")) != (command, str(output)):
        return sorted(files)
    if not record.get("complete"):
        return []
    kept = record.get("files") if isinstance(record.get("files"), Mapping) else {}
    return sorted(name for name, stat in files.items() if list(kept.get(name) or ()) != list(stat))


def written_records_folder() -> Path:
    """Where the records of what --out runs wrote are kept (`record_path`): the user's
    cache, `$XDG_CACHE_HOME/babelforge/written` (`~/.cache/...` without it)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "babelforge" / "written"


def read_written_record(output: Path) -> dict | None:
    """The record of what an --out run wrote at `output` (a real path); None when there is none or it cannot
    be read (then nothing there counts as the command's own)."""
    try:
        record = json.loads(record_path(output, written_records_folder()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


class WrittenRecords:
    """The records of what an `--out` run writes (`record_path`), so that its rerun into
    the same --out knows the files there are its own.

    `start()` (inside the OutputGuard, which keeps and puts back the records it finds) marks each output
    it may take over (`clean`) as under way; `commit()` records every output's files once the run
    succeeded. A run that fails leaves a record it made only where it left work a rerun resumes (an
    output that holds files). A record that cannot be written (a read-only home) is no error: the next
    run into that --out is refused, and says why.
    """

    def __init__(self, command: str, outputs: Sequence[Path], clean: Sequence[Path]):
        self.command = command
        self.outputs = list(outputs)
        self.clean = list(clean)
        self.paths = [record_path(output, written_records_folder()) for output in self.outputs]
        self.had: set[Path] = set()
        self.succeeded = False

    def __enter__(self) -> WrittenRecords:
        self.had = {path for path in self.paths if os.path.lexists(path)}
        return self

    def _write(self, output: Path, complete: bool) -> None:
        with contextlib.suppress(BabelforgeError):
            write_json(
                written_record(self.command, output, file_stats(output), complete),
                record_path(output, written_records_folder()),
            )

    def start(self) -> None:
        for output in self.clean:
            self._write(output, complete=False)

    def commit(self) -> None:
        for output in self.outputs:
            self._write(output, complete=True)
        self.succeeded = True

    def __exit__(self, kind, error, trace) -> None:
        if self.succeeded and kind is None:
            return
        for output, path in zip(self.outputs, self.paths):
            if path not in self.had and not file_stats(output):
                with contextlib.suppress(OSError):
                    path.unlink()
