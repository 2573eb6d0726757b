"""What a pin is and where it lives: the vocabulary every fetch and `babelforge pins` share.

A remote input (a file, an archive, a Hub model or dataset) is pinned by a sha256 or a Hub commit kept
in one declared home (a column of a resources/ table, a params.yaml key). `PinHome` names both the
input (as `babelforge pins` lists it) and that home, so a refused download can say in one line which
input changed, where its pin is, and how to accept the new bytes once someone has checked them.

The inventory is pure; the two writers at the end (`set_tsv_cell`, `set_params_value`) change one value of
a pin's home in place, leaving every other byte of the file as it was, and check what they wrote.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import write_text

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


# ------------------------------------------------------------------ remote inputs

KINDS = ("source", "file", "hub-model", "hub-dataset", "service")  # file: a release file, an archive, an image
# How an input is pinned: a digest or commit (pinned), a library's named tag (pinned by name only: the
# library maps it to a repo read at its default branch), or nothing a fetch can check (a live service).
STRENGTHS = ("pinned", "tag", "unpinned", "unpinnable")


@dataclass(frozen=True)
class RemoteInput:
    """One thing babelforge reads from outside the machine, and where its pin lives.

    `ask` is what `pins --update` asks upstream: a URL (its sha256 is the pin) or a Hub repo id (the
    commit of `revision` is the pin); `repo_type` is `model` or `dataset` for a Hub repo."""

    name: str
    kind: str
    pin: str | None
    home: PinHome
    reads: tuple[str, ...]
    ask: str = ""
    revision: str = "main"  # the Hub revision a commit is resolved from
    repo_type: str = ""  # model | dataset for a Hub repo; "" for a URL
    strength: str = ""  # derived when empty: pinned when `pin`, else unpinned
    note: str = ""
    # how `pins --update` writes the pin: ("params", dotted key), ("tsv", file, key column, key, column),
    # ("manifest", file); () when it is written by hand
    target: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS or (self.strength and self.strength not in STRENGTHS):
            raise ValueError(f"{self.name}: kind {self.kind!r} / strength {self.strength!r} unknown")

    @property
    def state(self) -> str:
        return self.strength or ("pinned" if self.pin else "unpinned")

    def pin_text(self) -> str:
        if self.state == "unpinned":
            return UNPINNED
        return self.pin or self.state


def counts_by_kind(inputs: list[RemoteInput]) -> dict[str, dict[str, int]]:
    """kind -> state -> how many, in KINDS and STRENGTHS order, kinds with no input left out."""
    table: dict[str, dict[str, int]] = {}
    for kind in KINDS:
        of_kind = [item for item in inputs if item.kind == kind]
        if of_kind:
            table[kind] = {state: sum(item.state == state for item in of_kind) for state in STRENGTHS}
    return table


def check_new_pin(item: RemoteInput, value: str) -> None:
    """A resolved pin has the shape its kind needs: a commit for a Hub repo, a sha256 for a file."""
    ok = is_commit(value) if item.repo_type else is_sha256(value)
    if not ok:
        raise BabelforgeError(
            f"{item.name}: upstream answered {value!r}, not a {'commit' if item.repo_type else 'sha256'}; nothing written"
        )


# ------------------------------------------------------------------ writing a pin into its home

KEY_LINE = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_]+):(?P<value>[^#]*?)(?P<comment>\s+#.*)?$")


def key_line(lines: list[str], path: list[str]) -> int | None:
    """The index of the line that holds the mapping key `path` (a.b.c) in a block-style YAML file,
    found by indentation (list items and flow mappings are not walked: a pin is a plain key)."""
    stack: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        match = KEY_LINE.match(line.rstrip("\n"))
        if not match:
            continue
        indent = len(match["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match["key"]))
        if [key for _, key in stack] == path:
            return index
    return None


def set_params_value(path: Path, dotted: str, value: str, profile: str) -> None:
    """Write `value` as the params.yaml key `dotted` (its `profile` branch when the key holds a
    `{sample: ..., full: ...}` choice), keeping the line's comment and every other line; the file
    is read back and must give `value` there, or nothing is written."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    keys = dotted.split(".")
    index = key_line(lines, keys + [profile])
    if index is None:
        index = key_line(lines, keys)
    if index is None:
        raise BabelforgeError(f"{path}: no key {dotted}; add `{dotted}: {value}` by hand")
    match = KEY_LINE.match(lines[index].rstrip("\n"))
    # a long scalar may be folded onto the lines below its key (more indented, no key of their own)
    end = index + 1
    if not match["value"].strip():
        while end < len(lines) and lines[end].strip() and not KEY_LINE.match(lines[end].rstrip("\n")):
            if len(lines[end]) - len(lines[end].lstrip(" ")) <= len(match["indent"]):
                break
            end += 1
    lines[index:end] = [f"{match['indent']}{match['key']}: {value}{match['comment'] or ''}\n"]
    new_text = "".join(lines)
    try:
        node = yaml.safe_load(new_text)
    except yaml.YAMLError:
        node = None
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict) and profile in node:
        node = node[profile]
    if str(node) != value:
        raise BabelforgeError(f"{path}: writing {dotted} would not read back as {value}; set it by hand")
    write_text(new_text, path)


def set_tsv_cell(path: Path, key_column: str, key: str, column: str, edit: Callable[[str], str]) -> str:
    """Replace one cell of a tab-separated table (the row whose `key_column` is `key`) by
    `edit(old)`; every other byte stays. Returns the old value."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\r\n").split("\t")
    if key_column not in header or column not in header:
        raise BabelforgeError(f"{path}: no column {key_column!r} or {column!r} in its header")
    for index, line in enumerate(lines[1:], start=1):
        ending = line[len(line.rstrip("\r\n")) :]
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) == len(header) and fields[header.index(key_column)] == key:
            old = fields[header.index(column)]
            fields[header.index(column)] = edit(old)
            lines[index] = "\t".join(fields) + ending
            write_text("".join(lines), path)
            return old
    raise BabelforgeError(f"{path}: no row with {key_column} {key!r}")
