"""Two writers of one output at the same time: the stage lock (builders/core/io.py, taken by the
CLI for every stage) lets one through and stops the other with one line naming the holder's pid;
whatever the timing the output is the clean build's, never a mix. Two `dvc repro` at once in a
stand-in DVC project: DVC's own lock lets one run, the result is the clean build's."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.locks import lock_path, stage_lock
from babelforge.core.stages import load, outputs
from tests.reliability.workspace import environment, leftovers


def test_a_held_output_stops_a_second_writer_naming_the_pid(tmp_path):
    output = tmp_path / "data" / "labels.parquet"
    with stage_lock("labels", [output]):
        assert f"(pid {os.getpid()})" in lock_path(output).read_text()
        with pytest.raises(
            BabelforgeError, match=rf"labels.parquet is being written by babelforge labels \(pid {os.getpid()}\)"
        ):
            with stage_lock("labels", [output, tmp_path / "other"]):
                pass
        assert not lock_path(tmp_path / "other").exists()  # a refused run holds nothing
    assert not lock_path(output).exists()
    with stage_lock("labels", [output]):  # released: the next run gets it
        pass


def test_every_dvc_stage_locks_the_outputs_dvc_yaml_names(repo_root):
    from babelforge.commands import COMMANDS
    from babelforge.core.stages import Paths

    stages = yaml.safe_load((repo_root / "dvc.yaml").read_text())["stages"]
    config = type("Config", (), {"paths": Paths(), "dataset": "babel-imagenet", "view": "mvl-sib"})()
    for name in set(stages) & set(COMMANDS):
        assert outputs(load(name), config), f"{name}: no output to lock"
    assert outputs(load("labels"), config) == [Paths().labels, Paths().languages, Paths().candidates]
    assert outputs(load("card"), config) == [f"{Paths().hub}/babel-imagenet"]  # a foreach key, its setting's value
    assert outputs(load("language_view"), config) == [f"{Paths().language_views}/mvl-sib.tsv"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "stage,outputs",
    [
        ("mvl_sib", ["data/mvl_sib"]),
        (
            "labels",
            [
                "data/babel_imagenet/candidates.parquet",
                "data/babel_imagenet/labels.parquet",
                "data/babel_imagenet/languages.parquet",
            ],
        ),
    ],
)
def test_two_processes_of_one_stage(stage, outputs, workspace_copy):
    root = workspace_copy.root
    clean = workspace_copy.digests()
    first = workspace_copy.start([stage])
    deadline = time.monotonic() + 300
    while (
        not all(lock_path(root / o).exists() for o in outputs) and first.poll() is None and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    second = workspace_copy.run([stage])
    out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err[-2000:]
    if second.returncode != 0:  # it came while the first held the outputs: one line naming the holder
        lines = [line for line in second.stderr.splitlines() if line.strip()]
        # the outputs are locked in sorted order: the first is the one named
        assert lines == [
            f"babelforge {stage}: error: {root / outputs[0]} is being written by babelforge "
            f"{stage} (pid {first.pid}); wait for it to finish (or stop it), then rerun"
        ]
    assert workspace_copy.digests() == clean
    assert leftovers(root) == []


@pytest.mark.slow
def test_two_processes_started_together_never_mix(workspace_copy):
    root = workspace_copy.root
    clean = workspace_copy.digests()
    runs = [workspace_copy.start(["mvl_sib"]) for _ in range(2)]
    results = [(run.wait(timeout=600), run.communicate()[1]) for run in runs]
    assert any(code == 0 for code, _ in results)
    for code, err in results:
        assert code == 0 or "is being written by babelforge mvl_sib (pid" in err, err[-1500:]
    assert workspace_copy.digests() == clean
    assert leftovers(root) == []


@pytest.mark.slow
def test_two_dvc_repro_at_once(workspace_copy):
    """A stand-in DVC project (the workspace, one stage: mvl_sib) and two `dvc repro` started together."""
    root = workspace_copy.root
    clean = workspace_copy.digests()
    (root / "dvc.yaml").unlink()
    (root / "dvc.yaml").write_text(
        yaml.safe_dump(
            {
                "stages": {
                    "mvl_sib": {
                        "cmd": f"{sys.executable} -m babelforge.cli mvl_sib",
                        "deps": ["sources/sib-200", "data/mvl_sib_images"],
                        "params": ["mvl_sib"],
                        "outs": ["data/mvl_sib"],
                    }
                }
            }
        )
    )
    dvc = str(Path(sys.executable).parent / "dvc")
    env = environment()
    subprocess.run([dvc, "init", "--no-scm", "-q"], cwd=root, env=env, check=True, timeout=120)
    runs = [
        subprocess.Popen([dvc, "repro"], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    results = [(run.wait(timeout=600), run.communicate()[1]) for run in runs]
    assert any(code == 0 for code, _ in results), results
    for code, err in results:
        assert code == 0 or "lock" in err.lower(), err[-1500:]
    assert workspace_copy.digests() == clean
    status = subprocess.run([dvc, "status"], cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert "up to date" in status.stdout, status.stdout + status.stderr
    assert leftovers(root / "data") == []
