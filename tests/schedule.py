"""The order the tests run in: the longest first, spread evenly over pytest-xdist's workers.

With `--dist=worksteal` each worker is first sent one contiguous chunk of the collected order
(as many tests each), then an idle worker takes tests from the end of a busy one's queue. So
the order is planned as chunks: the test files are dealt out longest first, each to the chunk
with the least work so far that has room (a file's tests stay together and in order: they share
module fixtures, which a split or an interleaving would build again); each chunk runs its longest
files first and ends with the quickest, which are what a steal moves. Without xdist
(or with one worker) the plan is one chunk: the longest first.

The estimates are the recorded durations in `tests/durations.json` (setup, call and teardown of
each test that took a second or more; `pytest -n auto --record-durations` updates it with the
tests it runs). A test
not in it counts as `UNRECORDED_SLOW` or `UNRECORDED_QUICK` seconds: a stale file only makes the
order worse, never a test wrong. Under `-p randomly` there is no plan: its shuffled order stands.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

DURATIONS = Path(__file__).with_name("durations.json")
RECORD_FROM_SECONDS = 1.0  # shorter tests are recorded as the unrecorded estimate
UNRECORDED_SLOW = 2.0
UNRECORDED_QUICK = 0.05

Item = TypeVar("Item")


@dataclass
class Unit(Generic[Item]):
    """Tests that run together on one worker, in this order."""

    key: Hashable
    seconds: float
    items: list[Item]


@dataclass
class Chunk(Generic[Item]):
    size: int
    seconds: float = 0.0
    units: list[Unit[Item]] = field(default_factory=list)

    @property
    def free(self) -> int:
        return self.size - sum(len(unit.items) for unit in self.units)


def chunk_sizes(n_items: int, workers: int) -> list[int]:
    """What worksteal sends each worker first: the pending tests split evenly, the remainder last."""
    sizes, left = [], n_items
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    return sizes


def planned_order(units: Sequence[Unit[Item]], workers: int) -> list[Item]:
    """The units dealt into `workers` chunks, longest first to the chunk with the least work that
    has room (a unit larger than every chunk's room is dealt test by test), then concatenated."""
    chunks = [Chunk[Item](size) for size in chunk_sizes(sum(len(u.items) for u in units), max(workers, 1))]
    queue = sorted(units, key=lambda unit: -unit.seconds)  # stable: equal units keep their order
    while queue:
        unit = queue.pop(0)
        fitting = [chunk for chunk in chunks if chunk.free >= len(unit.items)]
        if not fitting:
            share = unit.seconds / len(unit.items)
            queue[:0] = [Unit((unit.key, i), share, [item]) for i, item in enumerate(unit.items)]
            continue
        chunk = min(fitting, key=lambda c: c.seconds)
        chunk.units.append(unit)
        chunk.seconds += unit.seconds
    return [item for chunk in chunks for unit in chunk.units for item in unit.items]


def recorded_durations(path: Path = DURATIONS) -> dict[str, float]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def durations_to_record(seconds_by_test: dict[str, float]) -> dict[str, float]:
    """The file's content: tests of a second or more, rounded to 0.1 s, in name order."""
    return {
        name: round(seconds, 1) for name, seconds in sorted(seconds_by_test.items()) if seconds >= RECORD_FROM_SECONDS
    }
