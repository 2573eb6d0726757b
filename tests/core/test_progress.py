"""Shard progress lines: one per shard by default, at most one per interval (and the last) when asked."""

from __future__ import annotations

import itertools

from babelforge.core import progress
from babelforge.core.progress import ShardProgress, format_seconds


def lines_of(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_every_shard_has_its_line_by_default(capsys):
    bar = ShardProgress("image embeddings m", 3)
    for index in range(3):
        bar.shard_done(f"shard-{index}", 10, 1.0)
    bar.close()
    lines = lines_of(capsys)
    assert [line.split(": ", 1)[1].split(" done")[0] for line in lines] == ["shard-0", "shard-1", "shard-2"]
    assert lines[-1].startswith("image embeddings m: shard-2 done (3/3), 10 rows in 1.0 s")


def test_quick_shards_print_once_per_interval_and_always_the_last(capsys, monkeypatch):
    clock = itertools.count(0.0, 10.0)  # every reading of the clock 10 s after the one before
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    bar = ShardProgress("text embeddings m", 10, min_interval=30.0, unit="texts")
    for index in range(10):
        bar.shard_done(f"lang-{index}", 800, 10.0)
    bar.close()
    names = [line.split(": ", 1)[1].split(" done")[0] for line in lines_of(capsys)]
    # the first line at once, then one per 30 s of clock (two readings per shard: 20 s apart), and the last
    assert names == ["lang-0", "lang-2", "lang-4", "lang-6", "lang-8", "lang-9"]


def test_the_line_counts_in_its_own_unit(capsys):
    bar = ShardProgress("text embeddings m", 2, done=1, unit="texts")
    bar.shard_done("deu_Latn", 80_000, 26.0)
    (line,) = lines_of(capsys)
    assert line.startswith("text embeddings m: deu_Latn done (2/2), 80000 texts in 26.0 s, ")
    assert "texts/s, ETA 0 s" in line


def test_durations_read_as_a_person_writes_them():
    assert [format_seconds(s) for s in (0, 59.4, 60, 185, 3599, 3600, 7830)] == [
        "0 s",
        "59 s",
        "1 min 0 s",
        "3 min 5 s",
        "59 min 59 s",
        "1 h 0 min",
        "2 h 10 min",
    ]


def test_rate_and_eta_come_from_this_runs_shards(capsys, monkeypatch):
    clock = itertools.count(100.0, 1.0)  # started at 100 s; each later reading 1 s on
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    bar = ShardProgress("image embeddings m", 4, done=1)  # one shard found current: it costs nothing
    bar.shard_done("shard-1", 3, 1.0)
    (line,) = lines_of(capsys)
    # 3 rows in the 1 s since the start; the 2 shards left at the 1 s this run's one shard took
    assert line == "image embeddings m: shard-1 done (2/4), 3 rows in 1.0 s, 3 rows/s, ETA 2 s"


def test_a_line_is_due_once_exactly_the_interval_has_passed(capsys, monkeypatch):
    clock = itertools.count(0.0, 10.0)  # two readings a shard: 20 s between lines' clocks
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    bar = ShardProgress("text embeddings m", 3, min_interval=20.0)
    for index in range(3):
        bar.shard_done(f"lang-{index}", 1, 1.0)
    assert len(lines_of(capsys)) == 3
