"""Deterministic, atomic artifact writes, and reading them back: what every stage writes with.

Every artifact is written to a temporary file in the target directory and renamed into place, so a
killed stage leaves the previous artifact or none, never half of one. Temporary names carry the
writer's pid (babelforge.core.leftovers), so a later run can tell a dead writer's leftovers from a live
one's and removes them. Tables are sorted and written with fixed Parquet settings and no timestamps,
so the same inputs give byte-identical files.

What only the command line does around a stage (one writer per output: babelforge.core.locks; the
outputs put back when a stage fails: babelforge.core.output_guard; the record of what an `--out` run
wrote: babelforge.core.written_records) lives apart, so an edit to it reruns no stage.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.leftovers import clear_folder_leftovers_once, temp_prefix

PROVENANCE_KEY = b"babelforge.provenance"


def os_error_text(error: OSError) -> str:
    """An OSError as a short phrase (`File too large`, `Not a directory`), with a hint for a full disk."""
    text = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        text += " (disk full or a file-size limit)"
    return text


def make_parent_folder(target: Path) -> None:
    """The folder `target` goes in, made when missing; one line saying why it cannot be."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        blocking = next((p for p in target.parents if _exists(p)), None)
        reason = (
            f"{blocking} is a file, not a folder"
            if blocking is not None and not blocking.is_dir()
            else os_error_text(error)
        )
        raise BabelforgeError(f"cannot create the folder {target.parent}: {reason}") from None


def _exists(path: Path) -> bool:
    """Whether `path` exists; False where the OS cannot even look (a name too long raises in `exists`)."""
    try:
        return path.exists()
    except OSError:
        return False


@contextlib.contextmanager
def write_errors(target: Path) -> Iterator[None]:
    """An OSError while writing `target` becomes one line naming it (a full disk, a read-only folder)."""
    try:
        yield
    except OSError as error:
        # name another file the error is about (not our own temp file): a read inside the write block
        other = error.filename and not Path(str(error.filename)).name.startswith(f".{target.name}.")
        detail = f"{error.filename}: " if other and str(error.filename) != str(target) else ""
        raise BabelforgeError(f"cannot write {target}: {detail}{os_error_text(error)}; nothing was replaced") from None


@contextlib.contextmanager
def _named_as(tmp: Path, target: Path) -> Iterator[None]:
    """A failed write inside a temporary folder is reported at the folder's final place."""
    try:
        yield
    except BabelforgeError as error:
        raise BabelforgeError(str(error).replace(str(tmp), str(target))) from None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only on success."""
    target = Path(path)
    make_parent_folder(target)
    clear_folder_leftovers_once(target.parent)
    with write_errors(target):
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
        os.close(fd)
    tmp_path = Path(tmp)
    try:
        with write_errors(target):
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
    make_parent_folder(target)
    clear_folder_leftovers_once(target.parent)
    with write_errors(target):
        tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent))
    try:
        with write_errors(target), _named_as(tmp, target):
            yield tmp
            for item in [tmp, *tmp.rglob("*")]:
                os.chmod(item, 0o755 if item.is_dir() else 0o644)
            old = None
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=temp_prefix(target), suffix=".old", dir=target.parent))
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


def directory_hash(path: str | os.PathLike) -> str:
    """sha256 over the relative names and contents of every file below `path` (a model folder's revision)."""

    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(root).as_posix()}\0{sha256_file(file)}\n".encode())
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


def write_table_parts(parts: Iterable, path: str | os.PathLike, schema, provenance: dict | None = None) -> Path:
    """Write pyarrow tables one after the other into one Parquet file of `schema` (each part
    cast to it), holding one part at a time: a table too big for memory, built piece by piece.
    Same format, compression and metadata as `write_table`: one part gives the same bytes."""
    import pyarrow.parquet as pq

    metadata = {k: v for k, v in (schema.metadata or {}).items() if k != b"pandas"}
    if provenance is not None:
        metadata[PROVENANCE_KEY] = canonical_json(provenance).encode("utf-8")
    schema = schema.with_metadata(metadata or None) if metadata else schema.remove_metadata()
    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema, compression="zstd", compression_level=9) as writer:
            for part in parts:
                writer.write_table(part.select(schema.names).cast(schema), row_group_size=1 << 20)
    return Path(path)


def read_table(path: str | os.PathLike, columns: Sequence[str] | None = None, where: tuple[str, Any] | None = None):
    """Read a Parquet artifact as a pandas DataFrame (only `columns`, which must all be there;
    only the rows whose column `where[0]` equals `where[1]`, when given).

    A missing, truncated or foreign file, or a missing column, is one line naming the file.
    """
    return read_arrow(path, columns, where).to_pandas()


def read_arrow(path: str | os.PathLike, columns: Sequence[str] | None = None, where: tuple[str, Any] | None = None):
    """`read_table` as a pyarrow Table. With `where`, the file is scanned row group by row
    group and only the matching rows are kept: one language of a file of every language
    without the others in memory."""
    import pyarrow as pa

    path = Path(path)
    with _readable_parquet(path) as parquet:
        names = parquet.schema_arrow.names
        missing = [column for column in [*(columns or ()), *(where[:1] if where else ())] if column not in names]
        if missing:
            raise BabelforgeError(
                f"{path}: no column {missing[0]!r} (it has {', '.join(names)}); "
                "rebuild it with the stage that writes it"
            )
        if where is None:
            return parquet.read(columns=list(columns) if columns else None)
        import pyarrow.dataset as ds

        return ds.dataset(path, format="parquet").to_table(
            columns=list(columns) if columns else None, filter=ds.field(where[0]) == pa.scalar(where[1])
        )


def read_schema(path: str | os.PathLike):
    """The Arrow schema of a Parquet artifact (its footer only); a missing, truncated or foreign
    file is one line naming the file."""
    with _readable_parquet(Path(path)) as parquet:
        return parquet.schema_arrow


def value_counts(path: str | os.PathLike, column: str, batch_size: int = 1 << 16) -> dict[Any, int]:
    """{value: rows} of one column of a Parquet artifact, read in batches (bounded memory)."""

    import pyarrow.compute as pc

    path = Path(path)
    counts: collections.Counter = collections.Counter()
    with _readable_parquet(path) as parquet:
        if column not in parquet.schema_arrow.names:
            raise BabelforgeError(f"{path}: no column {column!r}; rebuild it with the stage that writes it")
        for batch in parquet.iter_batches(columns=[column], batch_size=batch_size):
            for entry in pc.value_counts(batch.column(0)).to_pylist():
                counts[entry["values"]] += entry["counts"]
    return dict(counts)


@contextlib.contextmanager
def _readable_parquet(path: Path) -> Iterator[Any]:
    """The open `pyarrow.parquet.ParquetFile`; any read error inside the block (a missing,
    truncated or foreign file) becomes one line naming the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():
        raise BabelforgeError(f"{path}: no such artifact; run the stage that writes it first")
    try:
        with pq.ParquetFile(path) as parquet:
            yield parquet
    except (OSError, pa.ArrowException) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BabelforgeError(
            f"{path}: not a readable Parquet file ({first}); rebuild it with the stage that writes it"
        ) from None


def read_provenance(path: str | os.PathLike) -> dict:
    metadata = read_schema(path).metadata or {}
    raw = metadata.get(PROVENANCE_KEY)
    return json.loads(raw) if raw else {}
