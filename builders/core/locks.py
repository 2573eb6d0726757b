"""One writer per output: the command line holds every output of a stage for the whole run.

A second `babelforge <stage>` (or `dvc repro` of it) writing any of the same outputs stops at once
with one line naming the holder's pid. Only the command line takes these locks (babelforge.cli), so
no stage's code depends on this module.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import make_parent_folder, os_error_text
from babelforge.core.leftovers import clear_leftovers


def lock_path(output: str | os.PathLike) -> Path:
    """The lock file of an output: `.<name>.lock` beside it (never inside a DVC output folder)."""
    output = Path(output)
    return output.with_name(f".{output.name}.lock")


def _missing_folders(path: Path) -> list[Path]:
    """The folders above `path` that do not exist yet, deepest first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def _take_lock(stage: str, output: Path) -> int:
    """An exclusive flock on `output`'s lock file, holding its pid; one line naming the holder if taken."""

    path = lock_path(output)
    make_parent_folder(path)
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise BabelforgeError(f"cannot write beside {output}: {os_error_text(error)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise BabelforgeError(
                f"{output} is being written by {holder}; wait for it to finish (or stop it), then rerun"
            ) from None
        # the holder before us may have removed the file after we opened it: lock the current one
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"babelforge {stage} (pid {os.getpid()})".encode(), 0)
            return fd
        os.close(fd)


@contextlib.contextmanager
def stage_lock(stage: str, outputs: Iterable[str | os.PathLike]) -> Iterator[None]:
    """Hold every output of a stage for the whole run: a second writer of any of them stops at
    once with one line naming the holder's pid. Dead writers' temp files are cleared on entry.

    The lock is an advisory `flock` on `.<name>.lock` beside each output, released (and the file
    removed) on exit; a killed holder's lock is released by the kernel, its file reused.
    """
    held: list[tuple[Path, int]] = []
    # Folders made only to hold a lock file go again when the stage wrote nothing into them, so a
    # failed stage leaves no empty output folder behind.
    made: list[Path] = []
    try:
        for output in sorted({Path(os.path.abspath(o)) for o in outputs}):
            made += _missing_folders(lock_path(output))
            held.append((output, _take_lock(stage, output)))
        for output, _ in held:
            clear_leftovers(output, recursive=True)
        yield
    finally:
        for output, fd in reversed(held):
            with contextlib.suppress(OSError):
                lock_path(output).unlink()
            os.close(fd)
        for folder in sorted(set(made), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()
