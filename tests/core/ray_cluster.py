"""A two-node Ray cluster on this machine, bound to loopback, with token authentication on.

Like two machines as far as one machine allows: each node is started from a working folder and
HOME of its own (`root/head`, `root/node`: no repo, no `data/` or `models/` there, no
~/.ray/auth_token), with the environment an image of the project gives (the venv, babelforge
installed, the test workers on PYTHONPATH); a stage reaches it only through an address.

The head is started the way a user starts one, `ray start --head --node-ip-address=127.0.0.1`, in
its own process group, optionally with the dashboard (`ray job submit` talks to it) and the Ray
client server (`ray://`) on ports of their own. On Linux Ray reads 127.0.0.1 as "this machine's network address" (it asks
the routing table) unless `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`: with it, every server of the
node (GCS, raylet, object manager, agents, workers) listens on 127.0.0.1 only. `ray start
--address` refuses to add a node in that mode, so the second node is started the way `ray start`
starts one, from Python (`python -m tests.core.ray_cluster node GCS TEMP_DIR CPUS`), in a process
group of its own: the test kills that group to lose the node.

Every process is ended by its process group or as a descendant of one (never `ray stop`, which
ends every Ray on the machine: a parallel test's too).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class LoopbackCluster:
    """A head (`ray start --head`) and a second node on 127.0.0.1, sharing a token file."""

    root: Path  # short (Unix socket paths): the Ray temp dir and the token
    port: int
    groups: list[int] = field(default_factory=list)  # process groups started here: head, node
    node_id: str = ""  # the second node's Ray node id
    dashboard_port: int = 0  # the head's dashboard (job submission), 0: none
    client_port: int = 0  # the head's Ray client server (ray://), 0: none

    @property
    def dashboard(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    @property
    def client_address(self) -> str:
        return f"ray://127.0.0.1:{self.client_port}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def token_file(self) -> Path:
        return self.root / "token"

    def environment(self, home: Path) -> dict[str, str]:
        """A node's environment: its own HOME, loopback, token mode with this cluster's own token
        (never the user's ~/.ray/auth_token), a node lost in a second or two (health checks every
        0.5 s)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        return {
            **env,
            "HOME": str(home),
            "PYTHONPATH": os.pathsep.join([str(REPO), *inherited_pythonpath()]),
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN_PATH": str(self.token_file),
            "RAY_health_check_initial_delay_ms": "0",
            "RAY_health_check_period_ms": "500",
            "RAY_health_check_timeout_ms": "500",
            "RAY_health_check_failure_threshold": "2",
            "RAY_USAGE_STATS_ENABLED": "0",
            # a Ray client's own server process may take longer than Ray's 30 s to start on 2 busy cores
            "RAY_CLIENT_SERVER_CHECK_CHANNEL_TIMEOUT_S": "120",
        }

    def spawn(self, argv: list[str], stderr: int, folder: str) -> subprocess.Popen:
        """A process of the cluster in its own process group (killed as a group at the end), with the
        cluster's environment, run from `root/folder` (also its HOME), its stdout read as text."""
        home = self.root / folder
        home.mkdir(exist_ok=True)
        process = subprocess.Popen(
            argv,
            env=self.environment(home),
            cwd=home,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        self.groups.append(process.pid)
        return process

    def start(
        self, head_cpus: int = 2, node_cpus: int = 1, timeout: float = 60, dashboard: bool = False, client: bool = False
    ) -> None:
        self.token_file.write_text(secrets.token_hex(24))
        self.token_file.chmod(0o600)
        self.dashboard_port = free_port() if dashboard else 0
        self.client_port = free_port() if client else 0
        served = [f"--include-dashboard={str(dashboard).lower()}"]
        if dashboard:
            served += [f"--dashboard-port={self.dashboard_port}", "--dashboard-host=127.0.0.1"]
        served += [f"--dashboard-agent-listen-port={free_port()}"]  # never another cluster's 52365
        if client:
            served += [f"--ray-client-server-port={self.client_port}"]
        head = self.spawn(
            [str(RAY), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={self.port}"]
            + [f"--num-cpus={head_cpus}", "--disable-usage-stats", *served]
            + [f"--temp-dir={self.root / 'ray'}"],
            stderr=subprocess.STDOUT,
            folder="head",
        )
        out, _ = head.communicate(timeout=timeout)
        if head.returncode:
            raise RuntimeError(f"ray start --head failed: {out[-2000:]}")
        node = self.spawn(
            [sys.executable, "-m", "tests.core.ray_cluster", "node", self.address, str(self.root / "ray")]
            + [str(node_cpus)],
            stderr=subprocess.PIPE,
            folder="node",
        )
        line = node.stdout.readline().split()  # "up <node id>" once the raylet is up
        if line[:1] != ["up"]:
            raise RuntimeError(f"the second node did not start: {node.stderr.read()[-2000:]}")
        self.node_id = line[1]

    def kill_node(self) -> None:
        """SIGKILL the second node: its raylet, agents and the process that started them (its
        workers die with their raylet)."""
        _signal_all(_members([self.groups[1]]), signal.SIGKILL)

    def stop(self) -> None:
        """SIGKILL every process of both nodes, as `ray stop --force` does (a SIGTERMed head takes
        10 s and more to go), and remove the files."""
        deadline = time.monotonic() + 10
        while (pids := {pid for pid in _members(self.groups) if _alive(pid)}) and time.monotonic() < deadline:
            _signal_all(pids, signal.SIGKILL)
            time.sleep(0.1)
        shutil.rmtree(self.root, ignore_errors=True)


def inherited_pythonpath() -> list[str]:
    """This process's own PYTHONPATH entries, after the repo's on a node's: the babelforge a node imports
    is then the one this test process imports. Without them a node of a clone run with the clone's
    package on PYTHONPATH (scripts/mutation_check.py) imports the installed (editable) babelforge,
    another checkout's code, and a mutant of the clone is never run on the cluster."""
    return [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry and entry != str(REPO)]


def loopback_cluster() -> LoopbackCluster:
    return LoopbackCluster(Path(tempfile.mkdtemp(prefix="bfray", dir="/tmp")), free_port())


def _processes() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, process group) of every process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return table


def _members(groups: list[int]) -> set[int]:
    """The processes of `groups` and all their descendants (Ray's workers start groups of their own)."""
    table = _processes()
    found = {pid for pid, (_, group) in table.items() if group in groups}
    while True:
        children = {pid for pid, (parent, _) in table.items() if parent in found} - found
        if not children:
            return found
        found |= children


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _signal_all(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _serve_node(gcs_address: str, temp_dir: str, cpus: int) -> None:
    """What `ray start --address=GCS --node-ip-address=127.0.0.1 --block` does, without its
    refusal to add a node when the cluster is bound to loopback."""
    from ray._private.node import Node
    from ray._private.parameter import RayParams

    params = RayParams(
        gcs_address=gcs_address,
        node_ip_address="127.0.0.1",
        num_cpus=cpus,
        temp_dir=temp_dir,
        node_manager_port=0,
        dashboard_agent_listen_port=free_port(),
        include_log_monitor=False,
    )
    node = Node(params, head=False, shutdown_at_exit=True, spawn_reaper=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # exit: Node stops its processes at exit
    print("up", node.node_id, flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__" and sys.argv[1:2] == ["node"]:
    _serve_node(sys.argv[2], sys.argv[3], int(sys.argv[4]))
