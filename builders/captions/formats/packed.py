"""The first bytes of a caption file that say it is packed, not the text its name promises."""

from __future__ import annotations

import re
from pathlib import Path

from babelforge.core.errors import BabelforgeError

UTF8_BOM = b"\xef\xbb\xbf"

# The first bytes of files that are packed, not text: a caption file named .jsonl / .csv / .json
# holding them is the wrong file (or needs unpacking), which no row-by-row reading can tell.
PACKED = {
    rb"\x1f\x8b": ("gzip-compressed", "unpack it first (gunzip -k FILE.gz)"),
    rb"BZh[1-9]1AY&SY": ("bzip2-compressed", "unpack it first (bunzip2 -k FILE.bz2)"),
    rb"\xfd7zXZ\x00": ("xz-compressed", "unpack it first (unxz -k FILE.xz)"),
    rb"\x28\xb5\x2f\xfd": ("zstd-compressed", "unpack it first (unzstd FILE.zst)"),
    rb"PK\x03\x04": ("zip archive", "unzip it first"),
    rb"PAR1": ("Parquet", "name it .parquet"),
}


def refuse_packed(path: Path, head: bytes, expected: str) -> None:
    """One line when a file that should be text (`expected`: JSON Lines, CSV...) starts with the
    bytes of a packed format (PACKED): gzip bytes named .jsonl are not a broken JSON Lines file."""
    for magic, (what, remedy) in PACKED.items():
        if re.match(magic, head):
            raise BabelforgeError(f"{path}: {what} bytes, not {expected}; {remedy}")
