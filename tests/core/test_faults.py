"""The small pieces behind the fault table (tests/reliability): pid-named temps and their cleanup,
one-line read and write errors, YAML syntax errors with file:line, the HTTP policy from the environment."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from babelforge.core.errors import BabelforgeError
from babelforge.core.http import RetryPolicy, policy_from_text
from babelforge.core.io import atomic_directory, atomic_path, read_table, write_table
from babelforge.core.leftovers import clear_leftovers
from babelforge.core.params import load_params, read_yaml


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_temp_names_carry_the_pid_and_a_dead_writers_temps_are_cleared(tmp_path):
    target = tmp_path / "a.parquet"
    # what a killed earlier process left: cleared by this process's first write into the folder
    stale_file = tmp_path / f".a.parquet.{dead_pid()}.k2j4h5g6.tmp"
    stale_other = tmp_path / f".b.json.{dead_pid()}.k2j4h5g6.tmp"  # another file's: the folder is cleared whole
    stale_dir = tmp_path / f".out.{dead_pid()}.k2j4h5g6.old"
    # a running writer's temp is not ours to remove (its own process: a signal sent to it by a bug hits nothing else)
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    live = tmp_path / f".a.parquet.{writer.pid}.k2j4h5g6.tmp"
    for path in (stale_file, stale_other, live):
        path.write_text("half")
    stale_dir.mkdir()
    try:
        with atomic_path(target) as tmp:
            assert tmp.name.startswith(f".a.parquet.{os.getpid()}.") and tmp.name.endswith(".tmp")
            tmp.write_text("y")
        assert not stale_file.exists() and not stale_other.exists() and not stale_dir.exists()
        assert live.exists() and target.read_text() == "y"
        with atomic_directory(tmp_path / "out") as folder:
            (folder / "f").write_text("z")
        assert (tmp_path / "out" / "f").read_text() == "z"
        assert clear_leftovers(target) == 0  # the live writer's temp stays
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "a.parquet", "out"])
    finally:
        writer.kill()
        writer.wait()
    assert clear_leftovers(target) == 1 and not live.exists()  # its writer gone, its temp is a leftover


def test_a_folder_is_scanned_for_leftovers_once_per_process_not_at_every_write(tmp_path, monkeypatch):
    import babelforge.core.io as io

    scans = []
    real_scandir = os.scandir
    monkeypatch.setattr(io.os, "scandir", lambda path: scans.append(path) or real_scandir(path))
    for index in range(50):  # a cache of many small files in one folder (the BabelNet answers)
        with atomic_path(tmp_path / "cache" / f"{index}.json") as tmp:
            tmp.write_text("{}")
    assert len(scans) == 1  # was a scan of the whole folder at every write: quadratic in its files
    assert len(list((tmp_path / "cache").iterdir())) == 50


def test_a_failed_write_is_one_line_and_replaces_nothing(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(BabelforgeError, match=r"cannot write .*t\.txt: .*missing.*; nothing was replaced"):
        with atomic_path(target) as tmp:
            tmp.write_text("new")
            (tmp_path / "missing").read_text()
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]
    with pytest.raises(BabelforgeError, match="is a file, not a folder"):
        write_table(pd.DataFrame({"a": [1]}), target / "x.parquet")


def test_read_table_names_the_file_and_the_missing_column(tmp_path):
    path = tmp_path / "t.parquet"
    write_table(pd.DataFrame({"a": [1], "b": ["x"]}), path)
    assert list(read_table(path, columns=["b"]).columns) == ["b"]
    with pytest.raises(BabelforgeError, match=r"t\.parquet: no column 'c' \(it has a, b\)"):
        read_table(path, columns=["a", "c"])
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(BabelforgeError, match=r"t\.parquet: not a readable Parquet file"):
        read_table(path)
    with pytest.raises(BabelforgeError, match="no such artifact"):
        read_table(tmp_path / "none.parquet")


def test_a_yaml_syntax_error_is_one_line_with_file_and_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("profile: sample\nlabels:\n  min_classes: [10\n  ranking: first\n")
    with pytest.raises(BabelforgeError) as caught:
        load_params(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:4:") and "YAML syntax error" in message and "\n" not in message


@pytest.mark.parametrize(
    "text, problem",
    [
        ("", "empty; a params file starts with `profile: sample` (or full)"),
        ("# only a comment\n", "empty; a params file starts with `profile: sample` (or full)"),
        ("labels:\n  min_classes: 10\n", "no `profile:` line; put `profile: sample` (or full) at its top"),
    ],
    ids=["empty", "comments only", "no profile"],
)
def test_an_empty_params_file_or_one_without_its_profile_is_one_line(tmp_path, text, problem):
    path = tmp_path / "params.yaml"
    path.write_text(text)
    with pytest.raises(BabelforgeError) as caught:
        load_params(path)
    assert str(caught.value).startswith(f"{path}: {problem}") and "\n" not in str(caught.value)
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")  # dvc.yaml has no profile: read as plain YAML
    assert read_yaml(tmp_path / "dvc.yaml") == {"stages": {}}


def test_the_http_policy_from_the_environment():
    assert policy_from_text("attempts=2, timeout=1.5") == RetryPolicy(attempts=2, timeout=1.5)
    assert policy_from_text("") == RetryPolicy()
    with pytest.raises(BabelforgeError, match="BABELFORGE_HTTP_POLICY: 'tries=2'"):
        policy_from_text("tries=2")
