"""What a pin is and where it lives: the vocabulary every fetch and `babelforge pins` share.

A remote input (a file, an archive, a Hub model or dataset) is pinned by a sha256 or a Hub commit kept
in one declared home (a column of a resources/ table, a params.yaml key). `PinHome` names both the
input (as `babelforge pins` lists it) and that home, so a refused download can say in one line which
input changed, where its pin is, and how to accept the new bytes once someone has checked them.

Pure: nothing here reads or writes a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SHA256 = re.compile(r"[0-9a-f]{64}")
COMMIT = re.compile(r"[0-9a-f]{40}")
UNPINNED = "UNPINNED"


@dataclass(frozen=True)
class PinHome:
    """An input's name as `babelforge pins` lists it, and where its pin is written."""

    name: str  # e.g. xm3600/captions.zip, hub:BAAI/AltCLIP
    where: str  # e.g. params.yaml xm3600_fetch.captions_sha256

    def accept_hint(self) -> str:
        return f"check the new file, then accept it with `babelforge pins --update --accept {self.name}`"


def mismatch_line(pin: PinHome, expected: str, actual: str, origin: str) -> str:
    """The one line of a fetch refused for its bytes: the input, both digests, the pin's home, what to do."""
    return (
        f"{pin.name}: sha256 {actual} from {origin}, but {pin.where} pins {expected}; nothing was kept "
        f"(upstream changed or the copy is corrupt): {pin.accept_hint()}"
    )


def is_sha256(text: str | None) -> bool:
    return bool(text) and SHA256.fullmatch(text) is not None


def is_commit(text: str | None) -> bool:
    return bool(text) and COMMIT.fullmatch(text) is not None
