"""Progress bars and status lines, on stderr so stdout stays for results."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterable
from typing import TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

# Where the stage's lines go while stderr itself is sent elsewhere (core.ray_log.ray_output_to_log
# sends it to a log file while Ray runs: Ray writes its own messages to the process's stderr).
_terminal = None


def terminal():
    """The stream the stage's lines and bars go to: stderr, or the terminal while stderr is a log."""
    return _terminal or sys.stderr


@contextlib.contextmanager
def lines_to(stream):
    """Send the stage's lines and bars to `stream` meanwhile."""
    global _terminal
    before, _terminal = _terminal, stream
    try:
        yield
    finally:
        _terminal = before


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it") -> Iterable[T]:
    """A tqdm bar when stderr is a terminal; the bare iterable otherwise (logs, CI)."""

    return tqdm(iterable, desc=desc, total=total, unit=unit, disable=None, file=terminal(), leave=False)


def info(message: str) -> None:
    print(message, file=terminal(), flush=True)


class ShardProgress:
    """Progress over the shards of a stage: a bar (done / total, rows/s, ETA) on a terminal and,
    everywhere (CI logs too), one line per finished shard, or per `min_interval` seconds and the
    last one where the shards are many and quick (a log of hundreds of lines says nothing more)."""

    def __init__(self, desc: str, total: int, done: int = 0, min_interval: float = 0.0, unit: str = "rows"):

        self.desc, self.total, self.done, self.initial = desc, total, done, done
        self.rows = 0
        self.started = time.monotonic()
        self.min_interval, self.unit = min_interval, unit
        self._last_line = float("-inf")
        self._bar = tqdm(total=total, initial=done, desc=desc, unit="shard", disable=None, file=terminal(), leave=False)

    def shard_done(self, name: str, rows: int, seconds: float) -> None:

        self.done += 1
        self.rows += rows
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.rows / elapsed
        # ETA from the shards this run made (the ones found current cost nothing)
        eta = elapsed / (self.done - self.initial) * (self.total - self.done)
        self._bar.set_postfix_str(f"{rate:,.0f} {self.unit}/s", refresh=False)
        self._bar.update(1)
        now = time.monotonic()
        if self.done < self.total and now - self._last_line < self.min_interval:
            return
        self._last_line = now
        info(
            f"{self.desc}: {name} done ({self.done}/{self.total}), {rows} {self.unit} in {seconds:.1f} s, "
            f"{rate:,.0f} {self.unit}/s, ETA {format_seconds(eta)}"
        )

    def close(self) -> None:
        self._bar.close()


def format_seconds(seconds: float) -> str:
    """`42 s`, `3 min 5 s`, `2 h 10 min`: durations for log lines."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
