"""Where Ray's own messages go while a stage talks to Ray: a log file of this run (ray_log_path),
named once on the terminal (announce_ray_log), while the stage's own lines stay on the terminal
(ray_output_to_log). The file is removed when the process ends if Ray wrote nothing into it, so runs
that Ray kept quiet leave no empty file behind."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import sys
import tempfile
import time
from pathlib import Path

from babelforge.core.progress import info, lines_to


@functools.cache
def ray_log_path() -> Path:
    """Where Ray's own messages go while this run (this process) connects to Ray and runs on it: a
    file of its own (user, start time, process id), so two runs of a user never mix their lines."""
    started = time.strftime("%Y%m%dT%H%M%S")
    path = Path(tempfile.gettempdir()) / f"babelforge-ray-{os.getuid()}-{started}-{os.getpid()}.log"
    # at the end of the run, not at the end of each redirection: a local Ray's processes, started while
    # stderr was the file, keep writing into it between one sharded call and the next
    atexit.register(remove_if_empty, path)
    return path


def remove_if_empty(path: Path) -> None:
    """Remove the run's Ray log when Ray wrote nothing into it (a file Ray wrote into is kept)."""
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size == 0:
            path.unlink()


_output_redirected = 0  # ray_output_to_log's depth: the outermost one redirects
_log_announced: set[Path] = set()  # the Ray log this run has named on the terminal already


def announce_ray_log(desc: str) -> None:
    """Name the run's Ray log on the terminal: once per run, not once per image set or model."""
    if ray_log_path() not in _log_announced:
        _log_announced.add(ray_log_path())
        info(f"{desc}: Ray's own messages go to {ray_log_path()}")


@contextlib.contextmanager
def ray_output_to_log():
    """Send what Ray writes to this process's stderr (its C++ core's log lines, its loggers' warnings,
    a lost node's dump) to ray_log_path() while the stage talks to Ray, and keep the stage's own
    lines (progress.info, its bars) on the terminal (when sys.stderr is the real stderr; a test's
    captured stderr keeps them)."""
    global _output_redirected
    if _output_redirected:
        yield
        return
    previous = sys.stderr
    swap = previous is sys.__stderr__ and previous is not None
    if previous is not None:
        previous.flush()
    log = os.open(ray_log_path(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    terminal = os.dup(2)
    os.dup2(log, 2)
    os.close(log)
    stage = (
        open(os.dup(terminal), "w", buffering=1, encoding=previous.encoding, errors=previous.errors) if swap else None
    )
    _output_redirected += 1
    try:
        with lines_to(stage) if stage else contextlib.nullcontext():
            yield
    finally:
        _output_redirected -= 1
        if stage:
            stage.close()
        if previous is not None:
            previous.flush()
        os.dup2(terminal, 2)
        os.close(terminal)
