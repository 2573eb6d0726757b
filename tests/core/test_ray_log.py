"""The run's Ray log (babelforge.core.ray_log): one file per run, Ray's stderr inside it while the
stage talks to Ray, and no empty file left behind by a run Ray kept quiet."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from babelforge.core import ray_log
from babelforge.core.progress import info
from babelforge.core.ray_log import announce_ray_log, ray_log_path, ray_output_to_log, remove_if_empty

# A run in a process of its own (the log is removed when the process ends): a partial stage line
# before Ray is talked to, the redirection with a stage line, optionally what Ray's core (its file
# descriptor 2) and its Python loggers (sys.stderr) would write, a line after it; then whether the
# file exists.
RUN = """
import os, sys
from babelforge.core.progress import info
from babelforge.core.ray_log import ray_log_path, ray_output_to_log
sys.stderr.write("before: ")
with ray_output_to_log():
    info("stage: a line of its own")
    if sys.argv[1]:
        os.write(2, sys.argv[1].encode())
        sys.stderr.write("ray logger: a warning")
os.write(2, b"after\\n")
print(ray_log_path(), ray_log_path().exists())
"""


def run_in_process(tmp_path: Path, ray_writes: str) -> tuple[Path, bool]:
    """The log path a run named (under `tmp_path`, its TMPDIR) and whether it existed at its end."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, ray_writes],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    path, existed = done.stdout.split()
    # the stage's lines stay on the terminal (the real stderr), before, during and after; Ray's go to the file
    assert done.stderr == "before: stage: a line of its own\nafter\n", done.stderr
    return Path(path), existed == "True"


def test_each_run_has_a_ray_log_of_its_own(tmp_path):
    """Ray's messages of one run never mix with another's: a file per process (user, start, pid)."""
    assert ray_log_path() == ray_log_path()  # one file for the whole run
    other, _ = run_in_process(tmp_path, "")
    assert other != ray_log_path()
    assert re.fullmatch(r"babelforge-ray-\d+-\d{8}T\d{6}-\d+\.log", other.name), other


def test_a_run_ray_kept_quiet_leaves_no_log_and_one_ray_wrote_to_keeps_it(tmp_path):
    quiet, existed = run_in_process(tmp_path, "")
    # kept through the run (a local Ray's processes still hold it), removed when the process ends
    assert existed and quiet.parent == tmp_path and not quiet.exists()
    loud, existed = run_in_process(tmp_path, "raylet: a worker died\n")
    assert existed and loud.read_text(encoding="utf-8") == "raylet: a worker died\nray logger: a warning"
    assert loud.stat().st_mode & 0o777 == 0o600  # the user's own: Ray's messages name paths and hosts
    assert sorted(tmp_path.iterdir()) == [loud]


def test_only_an_empty_log_is_removed(tmp_path):
    empty, written, absent = tmp_path / "empty.log", tmp_path / "written.log", tmp_path / "absent.log"
    empty.write_bytes(b"")
    written.write_bytes(b"x")
    for path in (empty, written, absent):
        remove_if_empty(path)
    assert sorted(tmp_path.iterdir()) == [written]


def test_a_captured_stderr_keeps_the_stage_lines_and_the_log_is_named_once(monkeypatch, capsys):
    """Under a test's captured stderr (not the real one) the stage's lines go there, not to the
    terminal's descriptor; the log's line comes once however many sharded calls a run makes."""
    monkeypatch.setattr(ray_log, "_log_announced", set())
    with ray_output_to_log():
        with ray_output_to_log():  # nested: only the outermost redirects
            info("stage: inside")
        announce_ray_log("first call")
        announce_ray_log("second call")
    assert capsys.readouterr().err == f"stage: inside\nfirst call: Ray's own messages go to {ray_log_path()}\n"
