"""A model's weights files checked before a library reads them: an empty, cut-short or foreign weights
file is one line naming the file. The libraries raise their own tracebacks without naming it
(safetensors' `SafetensorError: header too small`, torch's `failed finding central directory`,
CTranslate2's `File model.bin is incomplete`).

Each format is checked by what it says about its own length, without reading a tensor:

- safetensors: an 8-byte little-endian header length, then that many bytes of a JSON header whose
  tensors' `data_offsets` follow one another from 0 to exactly where the file ends;
- torch.save's zip format (`.bin`, `.pt`, `.pth`, `.ckpt` starting with a zip member's header): a
  central directory at its end (a file cut short has none);
- any weights file: not empty.

`weights_problem(path)` says what is wrong with one file (None: nothing this can see);
`check_weights(path, remedy)` raises one line for the first bad weights file of a folder (or a file).
"""

from __future__ import annotations

import json
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

from babelforge.core.errors import BabelforgeError

SAFETENSORS_SUFFIX = ".safetensors"
PICKLED_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt")  # torch.save files; CTranslate2's model.bin too
ZIP_MEMBER = b"PK\x03\x04"  # torch.save's default format is a zip archive
LENGTH_BYTES = 8  # safetensors: the header's length, a little-endian u64
MAX_HEADER = 100_000_000  # safetensors refuses a longer header itself


def safetensors_problem(head: bytes, size: int) -> str | None:
    """What is wrong with a safetensors file of `size` bytes that starts with `head` (at least its
    length and header, when the file has them); None when its header accounts for every byte."""
    if size == 0:
        return "empty (0 bytes)"
    if size < LENGTH_BYTES:
        return f"cut short: {size} bytes, less than the {LENGTH_BYTES}-byte length a safetensors file starts with"
    (length,) = struct.unpack("<Q", head[:LENGTH_BYTES])
    if length > MAX_HEADER:
        return f"not a safetensors file (it starts with a header length of {length:,} bytes)"
    if head[LENGTH_BYTES : LENGTH_BYTES + 1] not in (b"", b"{", b" "):  # a JSON object, as every writer starts it
        return "not a safetensors file (no JSON header after its 8-byte length)"
    data = size - LENGTH_BYTES - length
    if data < 0:
        return f"cut short: its header says {length:,} bytes, {size - LENGTH_BYTES:,} follow the length"
    try:
        header = json.loads(head[LENGTH_BYTES : LENGTH_BYTES + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return "not a safetensors file (its header is not JSON)"
    spans = tensor_spans(header)
    if spans is None:
        return "not a safetensors file (its header does not list tensors with data_offsets)"
    end = 0
    for name, begin, stop in sorted(spans, key=lambda span: (span[1], span[2])):
        if begin != end or stop < begin:
            return f"not a safetensors file (tensor {name!r} at bytes {begin:,}-{stop:,}, expected from {end:,})"
        end = stop
    if end > data:
        return f"cut short: its tensors need {end:,} bytes after the header, {data:,} are there"
    if end < data:
        return f"{data - end:,} bytes after its last tensor (two files joined, or a foreign one?)"
    return None


def tensor_spans(header) -> list[tuple[str, int, int]] | None:
    """(name, begin, end) of each tensor a safetensors header lists; None when it is not such a header."""
    if not isinstance(header, dict):
        return None
    spans = []
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(n) is int and n >= 0 for n in offsets)):
            return None
        spans.append((name, offsets[0], offsets[1]))
    return spans


def weights_problem(path: Path) -> str | None:
    """What is wrong with one weights file (None: nothing these checks can see)."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        if path.suffix == SAFETENSORS_SUFFIX:
            head = handle.read(LENGTH_BYTES)
            if len(head) == LENGTH_BYTES:
                head += handle.read(min(struct.unpack("<Q", head)[0], MAX_HEADER))
            return safetensors_problem(head, size)
        if size == 0:
            return "empty (0 bytes)"
        if handle.read(len(ZIP_MEMBER)) != ZIP_MEMBER:
            return None  # torch's legacy pickle stream, CTranslate2's own format: their loaders say more
    try:
        zipfile.ZipFile(path).close()  # reads the central directory at the end
    except (zipfile.BadZipFile, OSError) as error:
        return f"cut short or damaged: its zip archive cannot be read ({error})"
    return None


def weights_files(path: Path) -> Iterator[Path]:
    """The weights files of a model folder, its subfolders included (sentence-transformers keeps
    modules in their own), or the file itself."""
    if path.is_file():
        yield path
        return
    for file in sorted(path.rglob("*")):
        if file.suffix in (SAFETENSORS_SUFFIX, *PICKLED_SUFFIXES) and file.is_file():
            yield file


def check_weights(path: str | Path, remedy: str) -> None:
    """One line naming the first bad weights file of `path` (a model folder or a weights file), what
    is wrong with it, and `remedy` (what to do: build it again, fetch it again)."""
    for file in weights_files(Path(path)):
        try:
            problem = weights_problem(file)
        except OSError as error:
            problem = f"cannot be read ({error.strerror or error})"
        if problem:
            raise BabelforgeError(f"weights file {file}: {problem}; {remedy}")
