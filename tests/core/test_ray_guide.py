"""The Ray guide's loopback rehearsal, run as written: the shell blocks of docs/guides/ray-cluster.md
marked `<!-- runnable: ray-loopback -->` (tests/docs_blocks.py), in the page's order, in a copy of the
project holding what `captions_translate` reads.

A block that starts a node (`ray start --block`) runs in a process group of its own, as in a terminal of
its own, and the next block waits for its "Ray runtime started."; the others must exit 0. Where the page
says to stop (Ctrl-C in the second node's terminal, then the head's), the test sends each node's process
group SIGINT, as a terminal's Ctrl-C does, and then no process of the rehearsal may be left (found by
the token file every one of them was started with). Every output both routes wrote (source, references,
hypotheses, quarantine, input.json) must equal the local runner's (sha256 of every file), as the page's
own `sha256sum --check` says of the hypotheses, and the wheel must be built
outside the project's `build/`.

The rehearsal's ports and folder are fixed by the page (24610-24628, workers 24700-24899,
/tmp/ray-rehearsal): the test skips when one of them is taken, as by another rehearsal.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.docs_blocks import REPO, ShellBlock, shell_blocks_of
from tests.processes import processes_with_setting
from tests.project import command_env, copy_project, run, tree_digests

pytestmark = pytest.mark.slow

CONTEXT = "ray-loopback"
GUIDE = "docs/guides/ray-cluster.md"
STOP = "**Stop**: Ctrl-C"  # the page's stop step: every block after it runs once the nodes are stopped
REHEARSAL = Path("/tmp/ray-rehearsal")
TOKEN_SETTING = f"RAY_AUTH_TOKEN_PATH={REHEARSAL / 'token'}"
PORTS = [*range(24610, 24629), *range(24700, 24900)]
ROUTES = ("client", "job")
# what captions_translate writes under paths.captions (its DVC outputs; `.rates/` beside them holds timings)
OUTPUTS = ("source", "references", "hypotheses", "quarantine", "input.json")


def rehearsal() -> tuple[list[ShellBlock], int]:
    """The page's ray-loopback blocks in order, and the line of its stop step."""
    text = (REPO / GUIDE).read_text(encoding="utf-8")
    blocks = [block for block in shell_blocks_of(text, GUIDE) if block.runnable and block.context == CONTEXT]
    return blocks, text[: text.index(STOP)].count("\n") + 1


def taken_ports() -> list[int]:
    taken = []
    for port in PORTS:
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: a TIME_WAIT is no owner
            try:
                probe.bind(("0.0.0.0", port))
            except OSError:
                taken.append(port)
    return taken


def rehearsal_processes() -> dict[int, str]:
    """pid -> command of every process started with the rehearsal's token file (the nodes' Ray
    processes, their workers and agents, the job's driver), whatever name it gave itself."""
    return processes_with_setting(TOKEN_SETTING)


def stage_outputs(folder: Path) -> dict[str, str]:
    """sha256 of every file of the stage's outputs under `folder`."""
    return {name: digest for name, digest in tree_digests(folder).items() if name.split("/")[0] in OUTPUTS}


def block_environment(home: Path, project: Path) -> dict[str, str]:
    """A terminal in the checkout: the project's tools first on PATH, no Ray setting of the test's own
    and a HOME of its own (no ~/.ray/auth_token: only the rehearsal's token counts)."""
    env = {name: value for name, value in command_env(project).items() if not name.startswith("RAY_")}
    return {**env, "HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}


def default_sigint() -> None:
    # a terminal's foreground command takes Ctrl-C; a test runner may hand its children SIGINT ignored
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_node(block: ShellBlock, project: Path, env: dict[str, str], log: Path) -> subprocess.Popen:
    """The block in a process group of its own, once its node is up ("Ray runtime started.")."""
    with log.open("w") as output:
        process = subprocess.Popen(
            ["bash", "-ec", block.text],
            cwd=project,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=default_sigint,
        )
    deadline = time.monotonic() + 180
    while "Ray runtime started." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{block.name} did not start its node:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)
    return process


@pytest.fixture()
def free_ports() -> list[int]:
    """The rehearsal's ports, free (else the test skips before it copies the project)."""
    taken = taken_ports()
    if taken:
        pytest.skip(f"port(s) {taken[:5]} of the guide's rehearsal are taken (another rehearsal running?)")
    return PORTS


@pytest.fixture()
def checkout(tmp_path, shared_data, tiny_nllb) -> Path:
    """A copy of the project with what `captions_translate` reads: the XTD captions, the tiny NLLB at
    paths.nllb_model, the mt-captions language view."""
    project = tmp_path / "checkout"
    project.mkdir()
    copy_project(project)
    (project / "data" / "raw" / "xtd").mkdir(parents=True)
    shutil.copy2(shared_data / "xtd" / "xtd.json", project / "data" / "raw" / "xtd" / "xtd.json")
    shutil.copytree(tiny_nllb / "ct2", project / "models" / "nllb-ct2")
    run(["babelforge", "language_view", "mt-captions"], project, command_env(project))
    return project


def test_the_guides_loopback_rehearsal_runs_as_written(free_ports, checkout, tmp_path):
    pytest.importorskip("ray")
    blocks, stop_line = rehearsal()
    starts = [block for block in blocks if "ray start" in block.text]
    assert len(starts) == 2 and all("--block" in block.text for block in starts), [b.name for b in starts]
    assert any(block.line > stop_line for block in blocks), "no block after the page's stop step"
    shutil.rmtree(REHEARSAL, ignore_errors=True)  # a rehearsal's leftovers (its ports are free: none is running)
    (tmp_path / "home").mkdir()
    env = block_environment(tmp_path / "home", checkout)
    nodes: list[subprocess.Popen] = []
    seconds: dict[str, float] = {}
    digests: dict[str, dict[str, str]] = {}
    try:
        for number, block in enumerate(blocks):
            if block.line > stop_line and nodes:  # Ctrl-C in the second node's terminal, then the head's
                digests = {name: stage_outputs(REHEARSAL / name) for name in ("local", *ROUTES)}
                began = time.monotonic()
                for node in reversed(nodes):
                    os.killpg(node.pid, signal.SIGINT)
                    node.wait(timeout=60)
                deadline = time.monotonic() + 30
                while rehearsal_processes() and time.monotonic() < deadline:
                    time.sleep(0.5)
                assert not rehearsal_processes(), f"left after Ctrl-C: {rehearsal_processes()}"
                seconds["stop"] = time.monotonic() - began
                nodes = []
            began = time.monotonic()
            if "ray start" in block.text:
                nodes.append(start_node(block, checkout, env, tmp_path / f"node-{number}.log"))
            else:
                result = subprocess.run(
                    ["bash", "-ec", block.text], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
                )
                output = result.stdout + result.stderr
                assert result.returncode == 0, f"{block.name} exited {result.returncode}:\n{output[-4000:]}"
                if "sha256sum --check" in block.text:
                    assert "captions_translate: 8 shards, 8 current, 0 to do" in output, output[-3000:]
            seconds[block.name] = time.monotonic() - began
    finally:
        for node in nodes:
            os.killpg(node.pid, signal.SIGKILL)
        for pid in rehearsal_processes():
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(REHEARSAL, ignore_errors=True)
    assert {name.split("/")[0] for name in digests["local"]} == set(OUTPUTS), digests["local"]
    hypotheses = [name for name in digests["local"] if name.startswith("hypotheses/")]
    assert len(hypotheses) == 16, digests["local"]  # 8 shards: a Parquet and a manifest each
    for route in ROUTES:
        assert digests[route] == digests["local"], route
    assert not REHEARSAL.exists()  # the page's last block removed it
    assert not (checkout / "build" / "lib").exists() and not list((checkout / "build").glob("bdist.*"))
    print("rehearsal seconds:", {name: round(value, 1) for name, value in seconds.items()})
