"""A stage's outputs as they were, put back unless it succeeds (the command line's guard).

Only the command line guards a run (babelforge.cli), so no stage's code depends on this module.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from babelforge.core.io import write_errors
from babelforge.core.leftovers import temp_prefix


def _link_or_copy(source: str, dest: str) -> None:
    """A hard link (no bytes copied; every writer replaces a file by renaming, never rewrites it in
    place, so the link keeps the old bytes), or a copy where the file system has no links."""
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, dest, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


class OutputGuard:
    """A stage's existing outputs, kept as they are while it runs and put back unless it succeeds.

    On entry each output that exists is kept beside itself (`.<name>.<pid>.<random>.old`, hard
    links of its files); `commit()` marks the run a success and the kept copies go on exit; any
    other exit (an error, a non-zero exit code, Ctrl-C) swaps each kept copy back in for whatever
    the stage left there, so a stage that stops half way leaves its outputs byte for byte as they
    were. An output that did not exist is left as the stage left it (atomic files, committed
    shards a rerun resumes). A SIGKILL leaves the stage's work in place and the copy as a dead
    writer's leftover, removed by the next run (`clear_leftovers`): a rerun resumes the shards.
    """

    def __init__(self, outputs: Iterable[str | os.PathLike]):
        self.outputs = sorted({Path(os.path.abspath(o)) for o in outputs})
        self.kept: dict[Path, Path] = {}
        self.succeeded = False

    def commit(self) -> None:
        self.succeeded = True

    def __enter__(self) -> OutputGuard:
        try:
            for output in self.outputs:
                if os.path.lexists(output):
                    self.kept[output] = self._keep(output)
        except BaseException:
            self._discard()
            raise
        return self

    def _keep(self, output: Path) -> Path:
        with write_errors(output):
            if output.is_dir() and not output.is_symlink():
                kept = Path(tempfile.mkdtemp(prefix=temp_prefix(output), suffix=".old", dir=output.parent))
                shutil.copytree(output, kept, symlinks=True, copy_function=_link_or_copy, dirs_exist_ok=True)
            else:
                kept = output.parent / f"{temp_prefix(output)}{os.urandom(4).hex()}.old"
                _link_or_copy(str(output), str(kept))
        return kept

    def _discard(self) -> None:
        for kept in self.kept.values():
            with contextlib.suppress(OSError):
                _remove(kept)

    def _restore(self) -> None:
        for output, kept in self.kept.items():
            if os.path.lexists(output):
                aside = Path(tempfile.mkdtemp(prefix=temp_prefix(output), suffix=".old", dir=output.parent))
                os.replace(output, aside / output.name)
                os.replace(kept, output)
                shutil.rmtree(aside)
            else:
                os.replace(kept, output)

    def __exit__(self, kind, error, trace) -> None:
        if self.succeeded and kind is None:
            self._discard()
        else:
            self._restore()
