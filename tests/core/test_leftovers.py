"""The one temp-name rule (babelforge.core.leftovers) that the atomic writes, the CLI's guard and its
records share: which names are a writer's temps, which of those a dead writer left, and what is cleared."""

from __future__ import annotations

import subprocess
import sys

import pytest

from babelforge.core.leftovers import clear_leftovers, is_stale_leftover, is_temp_name, temp_prefix
from babelforge.core.written_records import file_stats
from tests.core.test_faults import dead_pid


def test_a_writers_temp_names_are_told_from_data_files(tmp_path):
    pid_named = f"{temp_prefix(tmp_path / 'a.parquet')}k2j4h5g6.tmp"
    assert pid_named.startswith(".a.parquet.") and is_temp_name(pid_named)
    assert is_temp_name(".a.parquet.k2j4h5g6.old")  # from before pids were in the name
    assert not any(map(is_temp_name, ["a.parquet", ".a.parquet", ".a.parquet.lock", ".hidden.tmp"]))
    # an output's listing leaves a writer's temps out, whichever rule named them
    (tmp_path / "out").mkdir()
    for name in ("rows.parquet", pid_named, ".rows.parquet.k2j4h5g6.tmp"):
        (tmp_path / "out" / name).write_text("x")
    assert list(file_stats(tmp_path / "out")) == ["rows.parquet"]


def test_checking_a_live_writer_leaves_it_running_and_its_temp_in_place(tmp_path):
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".a.parquet.{writer.pid}.k2j4h5g6.tmp"
        live.write_text("half")
        assert not is_stale_leftover(live) and clear_leftovers(tmp_path / "a.parquet") == 0
        assert live.exists()
        with pytest.raises(subprocess.TimeoutExpired):  # asked whether it runs, sent no signal: still running
            writer.wait(timeout=0.5)
    finally:
        writer.kill()
        writer.wait()
    assert is_stale_leftover(live) and clear_leftovers(tmp_path / "a.parquet") == 1 and not live.exists()


def test_inside_an_output_folder_only_when_asked(tmp_path):
    output = tmp_path / "shards"
    output.mkdir()
    inner = output / f".part-0.parquet.{dead_pid()}.k2j4h5g6.tmp"
    inner.write_text("half")
    assert clear_leftovers(output) == 0 and inner.exists()  # beside the output only
    assert clear_leftovers(output, recursive=True) == 1 and not inner.exists()
