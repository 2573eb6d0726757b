"""Which caption ids a stream has had: a repeat found in millions of ids without holding them as strings."""

from __future__ import annotations

import hashlib

import numpy as np


class SeenIds:
    """The ids a stream has had so far, as sorted runs of 16-byte digests: 16 bytes per id
    (a set of Python strings costs ~100), so checking CC3M's 3.3 M ids holds ~53 MB. Runs
    merge when one grows as long as the one before (a binary counter): O(n log n) overall."""

    def __init__(self):
        self.runs: list = []

    @staticmethod
    def digests(ids: list[str]):

        return np.array([hashlib.blake2b(i.encode("utf-8"), digest_size=16).digest() for i in ids], dtype="S16")

    def add(self, ids: list[str]) -> list[int]:
        """Add a block of ids; the positions in `ids` of those seen before (earlier in the block or
        in an earlier block), which are not added: the first of each id is the one kept."""

        digests = self.digests(ids)
        repeated = np.zeros(len(ids), dtype=bool)
        for run in self.runs:
            at = np.minimum(np.searchsorted(run, digests), len(run) - 1)
            repeated |= run[at] == digests
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests.tolist()):
            if not repeated[position] and first.setdefault(digest, position) != position:
                repeated[position] = True
        new = digests[~repeated]
        if len(new):
            self.runs.append(np.sort(new))
        while len(self.runs) > 1 and len(self.runs[-2]) <= len(self.runs[-1]):
            last = self.runs.pop()
            self.runs[-1] = np.sort(np.concatenate([self.runs[-1], last]))
        return np.flatnonzero(repeated).tolist()
