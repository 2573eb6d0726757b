"""Deterministic, atomic artifact writes.

Every artifact is written to a temporary file in the target directory and renamed
into place, so a killed stage leaves the previous artifact or none, never half of one.
Tables are sorted and written with fixed Parquet settings and no timestamps, so the
same inputs give byte-identical files.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

PROVENANCE_KEY = b"babelforge.provenance"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, 0o644)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty temporary folder beside `path`; swap it in for `path` only on success.

    A failed or killed stage leaves the previous folder (or none), never a mix. Permissions
    are normalised (folders 755, files 644): a temporary folder is created private.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        for item in [tmp, *tmp.rglob("*")]:
            os.chmod(item, 0o755 if item.is_dir() else 0o644)
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.replace(target, old / target.name)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def canonical_json(obj: Any) -> str:
    """JSON text with sorted keys and a trailing newline: stable across runs."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, indent=2, default=str) + "\n"


def write_json(obj: Any, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(canonical_json(obj), encoding="utf-8")
    return Path(path)


def read_json(path: str | os.PathLike) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_text(text: str, path: str | os.PathLike) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_table(
    table,
    path: str | os.PathLike,
    sort_by: Sequence[str] = (),
    provenance: dict | None = None,
) -> Path:
    """Write a pandas DataFrame or pyarrow Table as Parquet, sorted by `sort_by`.

    Provenance (a JSON-able dict) goes into the schema metadata, read back with
    `read_provenance`. The pandas index is never stored.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not isinstance(table, pa.Table):
        table = pa.Table.from_pandas(table, preserve_index=False)
    if sort_by:
        table = table.sort_by([(column, "ascending") for column in sort_by])
    # Drop pandas' own metadata: it records the pandas version and index layout,
    # neither of which is part of the data.
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        metadata[PROVENANCE_KEY] = canonical_json(provenance).encode("utf-8")
    table = table.replace_schema_metadata(metadata or None)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", compression_level=9, row_group_size=1 << 20)
    return Path(path)


def read_table(path: str | os.PathLike, columns: Sequence[str] | None = None):
    """Read a Parquet artifact as a pandas DataFrame."""
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=list(columns) if columns else None).to_pandas()


def read_provenance(path: str | os.PathLike) -> dict:
    import pyarrow.parquet as pq

    metadata = pq.read_schema(path).metadata or {}
    raw = metadata.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}
