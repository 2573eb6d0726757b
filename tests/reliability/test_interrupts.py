"""SIGKILL of each long stage at two moments: while it works (it holds its outputs' locks) and
while it writes (a temp file has appeared). After each kill every output is the one that was
there before (a killed stage replaces nothing by half); the rerun succeeds, writes the same
bytes as the clean build and leaves no temp or lock file behind."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from babelforge.core.locks import lock_path
from tests.reliability.workspace import leftovers

# stage -> its outputs, relative to the workspace (as dvc.yaml names them through `paths`)
OUTPUTS = {
    "senses": ["data/senses"],
    "labels": [
        "data/babel_imagenet/labels.parquet",
        "data/babel_imagenet/languages.parquet",
        "data/babel_imagenet/candidates.parquet",
    ],
    "mvl_sib": ["data/mvl_sib"],
    "prompts": ["data/babel_imagenet/prompts.parquet", "data/babel_imagenet/prompts_summary.json"],
}


def holding_locks(root: Path, outputs: list[str]):
    return lambda: all(lock_path(root / output).exists() for output in outputs)


def writing(root: Path, outputs: list[str]):
    """True once a temp file or folder of the stage exists beside or inside one of its outputs."""
    folders = {(root / output).parent for output in outputs} | {root / o for o in outputs if (root / o).is_dir()}

    def seen() -> bool:
        for folder in folders:
            try:
                if any(entry.name.startswith(".") and entry.name.endswith(".tmp") for entry in os.scandir(folder)):
                    return True
            except FileNotFoundError:
                continue
        return False

    return seen


def kill_when(process, condition, timeout: float = 600) -> bool:
    """SIGKILL `process` as soon as `condition()` holds; False when it finished first."""
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if condition():
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
            return True
        time.sleep(0.0002)
    process.communicate()
    return False


def without_leftovers(digests: dict[str, str]) -> dict[str, str]:
    return {
        path: digest for path, digest in digests.items() if not Path(path).name.startswith(".") and "/." not in path
    }


@pytest.mark.slow
@pytest.mark.parametrize("stage", list(OUTPUTS))
def test_kill_at_two_moments_then_rerun_equals_the_clean_build(stage, workspace_copy):
    root, outputs = workspace_copy.root, OUTPUTS[stage]
    clean = workspace_copy.digests()
    for moment, condition in (("working", holding_locks(root, outputs)), ("writing", writing(root, outputs))):
        for _attempt in range(3):  # a stage quicker than the watcher is started again
            process = workspace_copy.start([stage])
            if kill_when(process, condition):
                break
        else:
            pytest.fail(f"{stage} finished every time before the {moment} moment could be caught")
        # dot-files (leftovers, and captions' `.rates/` timings a run rewrites) are not outputs: left out of both
        assert without_leftovers(workspace_copy.digests()) == without_leftovers(clean), (
            f"killed while {moment}, {stage} left an output changed or half-written"
        )
    rerun = workspace_copy.run([stage])
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert without_leftovers(workspace_copy.digests()) == without_leftovers(clean), (
        "the rerun after the kills differs from the clean build"
    )
    assert leftovers(root) == []
