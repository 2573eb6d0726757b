"""What identifies a local model in provenance and shard hashes: its content, never its path's spelling.

The same model folder given as `models/nllb-ct2`, as its absolute path, through a symlink or as a
copy on another node has the same files, so it must make the same bytes and leave every shard
current. A record therefore holds the folder's content hash (`io.directory_hash`, a file's sha256)
and, for people reading it, the folder's own name (of the resolved path, so a link shows its target's);
the shard manifests' model hash (`content_hash_of`) leaves that name out, so even a renamed copy
keeps its shards current.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from babelforge.core.io import directory_hash, sha256_file

# The content hash of a folder by where it resolves to and its files' (name, size, mtime): a stage
# asks for it more than once (the plan, the run, the rate) and a full NLLB is gigabytes to read.
_hashes: dict[tuple[str, tuple], str] = {}


def display_name(path: str | os.PathLike) -> str:
    """The model's name as a record shows it: the resolved folder's (or file's) own name, the same
    whether the path is spelled relative, absolute or through a link."""
    return Path(path).expanduser().resolve().name


def _file_stats(root: Path) -> tuple:
    if root.is_file():
        stat = root.stat()
        return (("", stat.st_size, stat.st_mtime_ns),)
    return tuple(
        (file.relative_to(root).as_posix(), stat.st_size, stat.st_mtime_ns)
        for file in sorted(p for p in root.rglob("*") if p.is_file())
        for stat in [file.stat()]
    )


def content_hash(path: str | os.PathLike) -> str:
    """sha256 of a model folder (`directory_hash`: names and contents of its files) or file, kept
    for this process while none of its files changes size or modification time."""
    root = Path(path).expanduser().resolve()
    key = (str(root), _file_stats(root))
    if key not in _hashes:
        _hashes[key] = sha256_file(root) if root.is_file() else directory_hash(root)
    return _hashes[key]


def local_model_record(path: str | os.PathLike) -> dict[str, Any]:
    """{"name": display_name, "sha256": content_hash}: a local model as provenance records it;
    no hash where nothing is at `path` (the loader then says so)."""
    present = Path(path).expanduser().exists()
    return {"name": display_name(path), "sha256": content_hash(path) if present else None}


def content_of(record: dict[str, Any]) -> dict[str, Any]:
    """A model record without its display name: what decides the bytes a model makes."""
    return {key: value for key, value in record.items() if key != "name"}
