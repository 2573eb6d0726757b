"""A caption table (CSV / TSV, JSON Lines or Parquet) as caption rows: `id, image, caption` and
`ref_<key>` reference columns, streamed, each bad row quarantined in its place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.captions.formats.caption_set import CORE_COLUMNS, REFERENCE_PREFIX, CaptionSet
from babelforge.captions.formats.delimited import delimited_rows
from babelforge.captions.formats.jsonl import jsonl_rows
from babelforge.captions.formats.packed import refuse_packed
from babelforge.captions.formats.parquet import parquet_rows
from babelforge.captions.formats.seen_ids import SeenIds
from babelforge.core.bad_rows import (
    FAIL_FAST,
    BadRow,
    Quarantine,
    has_undecodable,
    id_problem,
    image_problem,
    raw_text,
    summary_line,
    text_problem,
)
from babelforge.core.errors import BabelforgeError


def stream_rows(path: str | Path, batch_rows: int = 8192) -> Iterator[tuple[str, int, dict[str, Any] | BadRow]]:
    """(source file, line or row number, row) of a caption table, one at a time, never the whole
    file in memory. A row the format cannot give (bytes that are not UTF-8, a line that is not a
    JSON object, a CSV row with too few or too many fields) comes as a `BadRow` in its place."""
    path = Path(path)
    if not path.exists():
        raise BabelforgeError(f"{path}: caption file not found; check captions.input.path")
    if path.suffix in (".jsonl", ".csv", ".tsv") and path.is_file():
        with path.open("rb") as head:
            refuse_packed(path, head.read(16), {".jsonl": "JSON Lines"}.get(path.suffix, path.suffix[1:].upper()))
    if path.suffix == ".jsonl":
        yield from jsonl_rows(path)
    elif path.suffix in (".csv", ".tsv"):
        yield from delimited_rows(path, "\t" if path.suffix == ".tsv" else ",")
    elif path.suffix == ".parquet" or path.is_dir():
        yield from parquet_rows(path, batch_rows)
    else:
        raise BabelforgeError(f"{path}: unknown caption table type; use .csv, .tsv, .jsonl or .parquet")


def value_kind(value: Any) -> str | None:
    """The type a column of a streamed table takes from this value (None: a null fits any), or
    "unreadable" for a value no Arrow column can hold (an int over 64 bits, a list of mixed types)."""
    if value is None:
        return None
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):  # ints and floats share a column (Arrow makes it double)
        return "number" if not isinstance(value, int) or -(2**63) <= value < 2**63 else "unreadable"
    import pyarrow as pa

    try:
        return str(pa.scalar(value).type)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return "unreadable"


def _kind_problem(row: dict[str, Any], kinds: dict[str, str | None]) -> str | None:
    """Why a row does not fit the columns the first good row set (`kinds`, set by that row when
    empty, completed as nulls give way to values), or None: a column the first good row lacks, or a
    value of another type."""
    if not kinds:
        kinds.update((column, None) for column in row)
    if any(column not in kinds for column in row):
        return "unexpected_column"
    found = {column: value_kind(value) for column, value in row.items()}
    for column, kind in found.items():
        if kind == "unreadable" or (kind is not None and kinds[column] not in (None, kind)):
            return "mixed_types"
    for column, kind in found.items():
        if kind is not None:
            kinds[column] = kind
    return None


def _table_caption(
    row: dict[str, Any],
    source: str,
    number: int,
    id_column: str,
    image_column: str,
    kinds: dict[str, str | None] | None = None,
) -> tuple[dict[str, Any], list[tuple[str, str]]] | BadRow:
    """One input row as (caption row, [(reference lang, text)]), `id_column` becoming caption_id;
    or the BadRow it is (an id, image or caption that cannot be used, or a row that does not fit
    the column types `kinds` the first rows set: a streamed table has one type per column)."""
    problem = id_problem(row.get(id_column)) or image_problem(row.get(image_column)) or text_problem(row.get("caption"))
    if not problem and any(isinstance(value, str) and has_undecodable(value) for value in row.values()):
        problem = "invalid_utf8"  # in a carried-through column: it could not be written
    if not problem and kinds is not None:  # the id is written as text, whatever its type
        problem = _kind_problem({k: v for k, v in row.items() if k != id_column}, kinds)
    if problem:
        return BadRow(source, number, raw_text(json.dumps(row, ensure_ascii=False, default=str)), problem)
    extras = {k: v for k, v in row.items() if k not in (id_column, image_column, "caption")}
    reserved = [k for k in extras if k in CORE_COLUMNS or k == "source_lang"]
    if reserved:
        raise BabelforgeError(f"{source}: column(s) {', '.join(reserved)} are reserved; rename them")
    references = [
        (column[len(REFERENCE_PREFIX) :], value)
        for column, value in extras.items()
        if column.startswith(REFERENCE_PREFIX) and isinstance(value, str) and value.strip()
    ]
    caption = {"caption_id": str(row[id_column]), "image": row[image_column], "caption": row["caption"], **extras}
    return caption, references


def table_captions(
    path: Path,
    registry,
    quarantine: Quarantine,
    id_column: str = "id",
    image_column: str = "image",
    excluded=lambda row: None,
    block_rows: int = 4096,
) -> Iterator[tuple[dict[str, Any], list[tuple[str, str]]]]:
    """(caption row, references) of every good row of a table, streamed; a bad row goes to
    `quarantine` in its place in the input's order; a row `excluded` names a reason for is counted there. Ids are unique: checked a block of
    `block_rows` at a time, before the block is handed on; a repeat is a `duplicate_id` row."""
    seen = SeenIds()
    checked = False
    block: list = []
    # JSON Lines rows each name their keys: one without the id, image or caption is a bad row, not
    # a file without the column; and their values' types are checked row by row (`kinds`), which a
    # CSV (all text) does not need and a Parquet file's schema gives, except across a folder of them.
    schemaless = path.suffix == ".jsonl"
    kinds: dict[str, str | None] | None = None

    def flushed_block():
        good = [position for position, item in enumerate(block) if not isinstance(item, BadRow)]
        repeated = {good[i] for i in seen.add([block[position][0]["caption_id"] for position in good])}
        for position, item in enumerate(block):
            if isinstance(item, BadRow):
                quarantine.add(item)
            elif position in repeated:
                caption = item[0]
                quarantine.add(BadRow(item[2], item[3], raw_text(caption["caption_id"]), "duplicate_id"))
            else:
                quarantine.keep()
                yield item[0], item[1]

    for source, number, row in stream_rows(path):
        if isinstance(row, BadRow):
            block.append(row)
        else:
            if not checked:
                _check_columns(path, row, id_column, image_column, registry, columns=not schemaless)
                checked = True
                if path.suffix not in (".csv", ".tsv"):
                    kinds = {}  # set by the first good row
            exclusion = excluded(row)
            if exclusion:
                quarantine.exclude(exclusion)
                continue
            item = _table_caption(row, source, number, id_column, image_column, kinds)
            block.append(item if isinstance(item, BadRow) else (*item, source, number))
        if len(block) == block_rows:
            yield from flushed_block()
            block = []
    if block:
        yield from flushed_block()
    if not checked:
        quarantine.check_fraction()  # every row bad: the stop names the reason (e.g. not UTF-8)
        raise BabelforgeError(f"{path}: no captions ({summary_line('rows', quarantine.summary())})")


def _check_columns(
    path: Path, row: dict[str, Any], id_column: str, image_column: str, registry, columns: bool = True
) -> None:
    """The first good row has the columns a caption table needs (`columns`: a table with a header or
    schema, where a missing column is the whole input's problem), and its `ref_<key>` columns name
    registry languages: a wrong file or column is the whole input's problem, not a row's."""
    missing = [column for column in (id_column, image_column, "caption") if column not in row]
    if missing and columns:
        raise BabelforgeError(
            f"{path}: missing column(s) {', '.join(missing)} (need {id_column}, {image_column}, caption)"
        )
    for column in row:
        if column.startswith(REFERENCE_PREFIX):
            registry.get(column[len(REFERENCE_PREFIX) :])  # unknown key: an error naming it


def read_caption_table(
    path: str | Path, source_lang: str, registry, quarantine: Quarantine | None = None
) -> CaptionSet:
    """A table with columns `id, image, caption` (+ anything else, carried through).

    `id` becomes `caption_id`; columns `ref_<key>` are human translations into `<key>`.
    A bad row goes to `quarantine` (default: stop at it).
    """
    captions, references = [], []
    for caption, refs in table_captions(Path(path), registry, quarantine or Quarantine(FAIL_FAST, "captions")):
        captions.append(caption)
        references += [(caption["caption_id"], lang, text) for lang, text in refs]
    return CaptionSet(source_lang, captions, references)
