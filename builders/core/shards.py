"""Shards: big work cut into pieces that are written, checked and redone one at a time.

A stage whose input can grow to millions of rows streams it in batches and cuts it into
shards of `shard_size` input rows (`iter_shards`). Each shard's output is one Parquet file
in a directory output (`shard-00000.parquet`, ...) and a small JSON manifest beside it
(`shard-00000.json`): the hash of the shard's input rows, of the params and of the model
that made it, the row count and the sha256 of the Parquet. The manifest is written after
the Parquet, both atomically, so it is the commit marker: a shard is *current* when its
manifest matches what this run would write and the Parquet's bytes hash to the recorded
sha256 (a truncated or foreign file is redone). A rerun after a kill redoes only shards that
are missing or stale, and `remove_unplanned` drops shards a shorter input no longer has.

Everything is deterministic (no timestamps), so the same input, params and model give the
same bytes in every shard, whichever runner wrote it. Readers open the directory as one
pyarrow dataset (`dataset`, `read`) and read only the columns and rows they ask for.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import sha256_file, write_json, write_table
from babelforge.core.model_identity import content_of

SHARD_PATTERN = re.compile(r"^shard-(\d{5,})\.(parquet|json)$")


@dataclass(frozen=True)
class Shard:
    """One piece of the input: rows [start, stop) of the stream, and a hash of their content."""

    index: int
    start: int
    stop: int
    input_hash: str

    @property
    def rows(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return shard_name(self.index)


@dataclass(frozen=True)
class Manifest:
    """What a written shard records: enough to tell whether it is still current."""

    shard: int
    input_rows: int
    input_hash: str
    params_hash: str
    model_hash: str
    rows: int  # rows of the output Parquet
    sha256: str  # of the output Parquet's bytes

    def matches(self, shard: Shard, params_hash: str, model_hash: str) -> bool:
        return (
            self.shard == shard.index
            and self.input_rows == shard.rows
            and self.input_hash == shard.input_hash
            and self.params_hash == params_hash
            and self.model_hash == model_hash
        )


def shard_name(index: int) -> str:
    return f"shard-{index:05d}"


def parquet_path(directory: str | os.PathLike, index: int) -> Path:
    return Path(directory) / f"{shard_name(index)}.parquet"


def manifest_path(directory: str | os.PathLike, index: int) -> Path:
    return Path(directory) / f"{shard_name(index)}.json"


# ---------------------------------------------------------------- hashing (pure)


def stable_hash(value: Any) -> str:
    """sha256 of a JSON-able value's canonical text (sorted keys): params, model records."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_hash(record: dict[str, Any]) -> str:
    """A manifest's `model_hash`: the model record's content (`content_of`: its hashes and settings),
    not its display name, so the same model at any path or name keeps the shards current."""
    return stable_hash(content_of(record))


def table_hash(table) -> str:
    """sha256 of a pyarrow table's content: column names and values in row order.

    Values go through their JSON text, so the hash does not depend on how Arrow laid the
    table out in memory (chunks, offsets) or on the pyarrow version's file format.
    """
    digest = hashlib.sha256()
    for name, column in zip(table.column_names, table.columns):
        digest.update(json.dumps(name).encode("utf-8"))
        digest.update(json.dumps(column.to_pylist(), ensure_ascii=False, default=str).encode("utf-8"))
    return digest.hexdigest()


# ---------------------------------------------------------------- planning (pure over a stream)


def rebatch(batches: Iterable, size: int) -> Iterator:
    """pyarrow tables of exactly `size` rows (the last one shorter) from batches of any size.

    Holds at most one output table plus one input batch in memory.
    """
    import pyarrow as pa

    if size < 1:
        raise BabelforgeError(f"shard size must be at least 1, not {size}")
    pending: list = []
    held = 0
    for batch in batches:
        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        offset = 0
        while offset < table.num_rows:
            take = min(size - held, table.num_rows - offset)
            pending.append(table.slice(offset, take))
            held += take
            offset += take
            if held == size:
                yield pa.concat_tables(pending).combine_chunks()
                pending, held = [], 0
    if held:
        yield pa.concat_tables(pending).combine_chunks()


def iter_shards(batches: Iterable, shard_size: int) -> Iterator[tuple[Shard, Any]]:
    """(Shard, its rows as a pyarrow table) for consecutive pieces of `shard_size` rows of the stream."""
    start = 0
    for index, table in enumerate(rebatch(batches, shard_size)):
        yield Shard(index, start, start + table.num_rows, table_hash(table)), table
        start += table.num_rows


def plan_shards(batches: Iterable, shard_size: int) -> list[Shard]:
    """The shards of a stream, without keeping its rows (one pass, one shard in memory)."""
    return [shard for shard, _ in iter_shards(batches, shard_size)]


# ---------------------------------------------------------------- manifests and shard files


def read_manifest(directory: str | os.PathLike, index: int) -> Manifest | None:
    """The shard's manifest, or None when it is missing or unreadable (then the shard is redone)."""
    path = manifest_path(directory, index)
    try:
        return Manifest(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def is_current(
    directory: str | os.PathLike, shard: Shard, params_hash: str, model_hash: str, verify: bool = True
) -> bool:
    """The shard's output exists, its manifest matches this input/params/model, and (verify) the
    Parquet's bytes still hash to what the manifest recorded: a truncated file is not current."""

    manifest = read_manifest(directory, shard.index)
    if manifest is None or not manifest.matches(shard, params_hash, model_hash):
        return False
    path = parquet_path(directory, shard.index)
    if not path.is_file():
        return False
    return not verify or sha256_file(path) == manifest.sha256


def pending_shards(
    directory: str | os.PathLike, plan: Sequence[Shard], params_hash: str, model_hash: str, verify: bool = True
) -> list[Shard]:
    """The shards of `plan` that are missing or stale in `directory`, in plan order."""
    return [shard for shard in plan if not is_current(directory, shard, params_hash, model_hash, verify)]


def write_shard(
    directory: str | os.PathLike,
    shard: Shard,
    table,
    params_hash: str,
    model_hash: str,
    sort_by: Sequence[str] = (),
    provenance: dict | None = None,
) -> Manifest:
    """Write the shard's output (sorted by `sort_by`, so the bytes do not depend on the order
    rows came back in), then its manifest. Both atomic; the manifest commits the shard."""

    path = parquet_path(directory, shard.index)
    # A stale manifest goes first: a kill between the two writes must not leave an old
    # manifest beside a new Parquet (it would then be checked against the wrong sha256 only).
    manifest_path(directory, shard.index).unlink(missing_ok=True)
    write_table(table, path, sort_by=sort_by, provenance=provenance)
    manifest = Manifest(
        shard=shard.index,
        input_rows=shard.rows,
        input_hash=shard.input_hash,
        params_hash=params_hash,
        model_hash=model_hash,
        rows=table.num_rows,
        sha256=sha256_file(path),
    )
    write_json(asdict(manifest), manifest_path(directory, shard.index))
    return manifest


def listed_shards(directory: str | os.PathLike) -> dict[int, set[str]]:
    """{shard index: {"parquet", "json"}} of the shard files present in `directory`."""
    found: dict[int, set[str]] = {}
    directory = Path(directory)
    if not directory.is_dir():
        return found
    for entry in directory.iterdir():
        match = SHARD_PATTERN.match(entry.name)
        if match:
            found.setdefault(int(match.group(1)), set()).add(match.group(2))
    return found


def remove_unplanned(directory: str | os.PathLike, plan: Sequence[Shard]) -> list[int]:
    """Delete shard files (and leftover temporary files) that are not in `plan`; the indices removed."""
    directory = Path(directory)
    planned = {shard.index for shard in plan}
    removed = []
    for index in sorted(set(listed_shards(directory)) - planned):
        parquet_path(directory, index).unlink(missing_ok=True)
        manifest_path(directory, index).unlink(missing_ok=True)
        removed.append(index)
    if directory.is_dir():
        for leftover in directory.glob(".shard-*.tmp"):
            leftover.unlink(missing_ok=True)
    return removed


# ---------------------------------------------------------------- reading a sharded directory


def committed_files(directory: str | os.PathLike) -> list[Path]:
    """The Parquet files of `directory` whose manifest exists, in shard order.

    An error when there are none, or when a Parquet has no manifest (a run was cut off: the
    stage that writes the directory must be rerun, it redoes only what is missing).
    """
    directory = Path(directory)
    listed = listed_shards(directory)
    if not listed:
        raise BabelforgeError(f"{directory}: no shards; run the stage that writes it")
    unfinished = sorted(index for index, kinds in listed.items() if kinds != {"parquet", "json"})
    if unfinished:
        raise BabelforgeError(
            f"{directory}: shard(s) {', '.join(shard_name(i) for i in unfinished[:5])} unfinished; "
            "rerun the stage that writes it (only missing shards are redone)"
        )
    return [parquet_path(directory, index) for index in sorted(listed)]


def dataset(directory: str | os.PathLike):
    """The shard directory as one pyarrow dataset (lazy: nothing is read until asked)."""
    import pyarrow.dataset as ds

    return ds.dataset([str(path) for path in committed_files(directory)], format="parquet")


def read(directory: str | os.PathLike, columns: Sequence[str] | None = None, filter=None):
    """The directory's rows as one pyarrow table: only `columns`, only rows passing `filter`
    (a `pyarrow.dataset` expression, pushed down to the files)."""
    return dataset(directory).to_table(columns=list(columns) if columns else None, filter=filter)


def read_shard(directory: str | os.PathLike, index: int, columns: Sequence[str] | None = None):
    """One shard's rows as a pyarrow table (only `columns`): a runner's input reader for a stage
    that works on an upstream shard directory (`functools.partial(read_shard, directory, i, columns)`)."""
    import pyarrow.parquet as pq

    return pq.read_table(parquet_path(directory, index), columns=list(columns) if columns else None)


def iter_batches(directory: str | os.PathLike, columns: Sequence[str] | None = None, batch_size: int = 65536):
    """The directory's rows as pyarrow record batches, shard after shard (bounded memory)."""
    yield from dataset(directory).to_batches(columns=list(columns) if columns else None, batch_size=batch_size)


def digest(directory: str | os.PathLike) -> dict[str, Any]:
    """What a downstream artifact's provenance records about a shard directory: its folder's name
    (never the path as spelled: the same shards give the same record from any working folder), the
    number of shards and rows, and one sha256 over the shards' manifests (which hold each file's sha256)."""
    files = committed_files(directory)
    hasher = hashlib.sha256()
    rows = 0
    for path in files:
        index = int(SHARD_PATTERN.match(path.name).group(1))
        manifest = read_manifest(path.parent, index)
        if manifest is None:
            raise BabelforgeError(f"{manifest_path(path.parent, index)}: unreadable manifest; rerun the stage")
        rows += manifest.rows
        hasher.update(f"{path.name}\t{manifest.sha256}\n".encode())
    return {"name": Path(directory).name, "shards": len(files), "rows": rows, "sha256": hasher.hexdigest()}
