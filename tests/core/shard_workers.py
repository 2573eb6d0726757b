"""Workers for the shard tests (a module, so Ray's actors can import them by name)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


class TextStats:
    """A cheap deterministic worker: per input row its id, upper-cased text and word count.
    `delay` seconds per chunk make a run slow enough to be killed in the middle."""

    def __init__(self, suffix: str = "", delay: float = 0.0):
        self.suffix = suffix
        self.delay = delay

    def __call__(self, batch):
        import pyarrow as pa

        if self.delay:
            time.sleep(self.delay)
        texts = batch.column("text").to_pylist()
        return pa.table(
            {
                "id": batch.column("id"),
                "upper": pa.array([text.upper() + self.suffix for text in texts], pa.string()),
                "words": pa.array([len(text.split()) for text in texts], pa.int64()),
            }
        )


def kill_after_shards(process, directory, shards: int, timeout: float) -> int:
    """SIGKILL `process` once `directory` holds `shards` committed shards (manifests), or at the
    timeout; the number committed when it died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and len(list(directory.glob("shard-*.json"))) < shards:
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    return len(list(directory.glob("shard-*.json")))


def logged_read(log: str, read):
    """An input reader that appends a line to `log` each time a shard's input is read (the
    runner's readers run in other processes under Ray: a file is what they share with the test)."""
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("read\n")
    return read()


class PinReport:
    """A worker reporting, per input row, the CPU pin variables of the process it runs in (JSON)."""

    def __call__(self, batch):
        import json

        import pyarrow as pa

        from babelforge.core.determinism import pinned_now

        pin = json.dumps(pinned_now(), sort_keys=True)
        return pa.table({"id": batch.column("id"), "pin": pa.array([pin] * batch.num_rows, pa.string())})


class Fragile(TextStats):
    """TextStats that appends `<pid> <Ray node id>` to `log` at each call (where the work ran, as
    the test sees it) and SIGKILLs its own process, as the OOM killer would, the first `dies`
    times it meets the row `victim` (`log + ".died"` counts the deaths, so a restarted actor
    goes on)."""

    def __init__(self, log: str, victim: str | None = None, delay: float = 0.0, dies: int = 1, pool: int = 1):
        super().__init__("", delay)
        self.log, self.victim, self.dies, self.pool = Path(log), victim, dies, pool

    def _pool_working(self, seconds: float = 60.0) -> None:
        """Wait until `pool` processes have logged a call: the pool is up before one dies (an actor
        restarted while another's first start is still pending can stay unplaced in Ray 2.60)."""
        deadline = time.monotonic() + seconds
        while len({line.split()[0] for line in self.log.read_text().splitlines()}) < self.pool:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)

    def __call__(self, batch):
        import ray

        node = ray.get_runtime_context().get_node_id() if ray.is_initialized() else "-"
        with open(self.log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {node}\n")
        if self.victim in batch.column("id").to_pylist():
            died = Path(f"{self.log}.died")
            if (len(died.read_text().splitlines()) if died.exists() else 0) < self.dies:
                self._pool_working()
                with open(died, "a", encoding="utf-8") as handle:
                    handle.write(f"{os.getpid()}\n")
                os.kill(os.getpid(), signal.SIGKILL)
        return super().__call__(batch)


class NodeModel(TextStats):
    """TextStats that needs a model folder `name` in its node's HOME (a node-local disk: the
    cluster's nodes each have a HOME of their own), checked before it is built (`model_paths`)."""

    def __init__(self, name: str):
        super().__init__()

    @staticmethod
    def model_paths(name: str) -> list[str]:
        return [str(Path(os.environ["HOME"]) / name)]
