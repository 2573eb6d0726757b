"""Parquet caption tables: one file, or a folder of them (img2dataset writes one per shard)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError


def parquet_rows(path: Path, batch_rows: int) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """Rows of a Parquet file or of a folder of them (img2dataset writes one per shard), each
    named by its file and its 1-based row number in that file."""
    import pyarrow.parquet as pq

    files = sorted(path.glob("*.parquet")) if path.is_dir() else [path]
    if not files:
        raise BabelforgeError(f"{path}: no .parquet files in the folder")
    import pyarrow as pa

    for file in files:
        number = 0
        try:
            for batch in pq.ParquetFile(file).iter_batches(batch_size=batch_rows):
                for row in _batch_rows(batch):
                    number += 1
                    yield str(file), number, row
        except (OSError, pa.ArrowException, UnicodeDecodeError) as error:  # cut off, not Parquet: the file's
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise BabelforgeError(
                f"{file}: not a readable Parquet file after row {number} ({first}); a file cut off? fetch it again"
            ) from None


def _batch_rows(batch) -> list[dict[str, Any]]:
    """A Parquet batch's rows; a text column holding bytes that are not UTF-8 (other writers do
    not check) is read as surrogates (surrogateescape), so the row holding them, not the file, is bad."""
    import pyarrow as pa

    try:
        return batch.to_pylist()
    except UnicodeDecodeError:
        pass
    columns = {}
    for name, column in zip(batch.schema.names, batch.columns):
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            raw = column.view(pa.binary() if pa.types.is_string(column.type) else pa.large_binary()).to_pylist()
            columns[name] = [None if value is None else value.decode("utf-8", "surrogateescape") for value in raw]
        else:
            columns[name] = column.to_pylist()  # text that is not UTF-8 nested in a list: the file's problem
    return [dict(zip(columns, values)) for values in zip(*columns.values())]
