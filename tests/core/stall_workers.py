"""Workers for the stall guard's cluster tests (a module, so Ray's actors can import them by name)."""

from __future__ import annotations

import time

from tests.core.shard_workers import TextStats


class SlowChunk(TextStats):
    """TextStats (the same bytes) taking `delay` seconds a chunk, and `slow` seconds for the chunk
    holding the row `slow_id`: slow but healthy work, longer than the stall floor."""

    def __init__(self, delay: float, slow_id: str, slow: float):
        super().__init__("")
        self.wait, self.slow_id, self.slow = delay, slow_id, slow

    def __call__(self, batch):
        time.sleep(self.slow if self.slow_id in batch.column("id").to_pylist() else self.wait)
        return super().__call__(batch)
