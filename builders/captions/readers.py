"""Caption sources: the XTD / xFlickrCO JSON layout, plain CSV / TSV / JSONL / Parquet tables and
img2dataset's Parquet output, each read by its own module of `babelforge.captions.formats`.

`stream_captions` is what the translate stage reads: the caption set as a stream of pyarrow
tables, so a caption set of millions of rows never sits in memory. `read_captions` returns a whole
`CaptionSet`: one row per English (source) caption with `caption_id, image, caption` plus any other
input columns carried through untouched, and the human translations the source ships with (XTD has
ten languages), keyed by the registry key of their language so chrF can be computed against them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.captions.formats.caption_set import REFERENCES_COLUMN, CaptionSet
from babelforge.captions.formats.img2dataset import img2dataset_captions
from babelforge.captions.formats.table import read_caption_table, table_captions
from babelforge.captions.formats.xtd import read_xtd
from babelforge.captions.input_config import InputConfig
from babelforge.core.bad_rows import Quarantine
from babelforge.core.errors import BabelforgeError


def stream_captions(
    config: InputConfig, registry, batch_rows: int = 8192, quarantine: Quarantine | None = None
) -> Iterator:
    """The caption set `config` names as pyarrow tables of up to `batch_rows` captions.

    Columns: `caption_id, image, caption`, the input's other columns, and `__references__`.
    Tables and JSONL, CSV / TSV, Parquet and img2dataset's Parquet are read as a stream (memory
    bounded by `batch_rows`); XTD's JSON is one small document and is read whole.
    Caption ids are unique: checked over the whole stream (`SeenIds`: 16 bytes per caption kept).
    Bad rows go to `quarantine` (one under `config.policy` when not given); when the stream ends
    more than `max_bad_fraction` of bad rows is an error.
    """
    registry.get(config.source)
    path = Path(config.path)
    quarantine = quarantine if quarantine is not None else Quarantine(config.policy, "captions")
    if config.format == "xtd":
        captions = read_xtd(path, config.source, registry, quarantine, config.limit)
        by_id: dict[str, list] = {}
        for caption_id, lang, text in captions.references:
            by_id.setdefault(caption_id, []).append((lang, text))
        pairs = ((row, by_id.get(row["caption_id"], [])) for row in captions.captions)
    elif config.format == "table":
        pairs = table_captions(path, registry, quarantine)
    elif config.format == "img2dataset":
        pairs = img2dataset_captions(path, registry, quarantine)
    else:
        raise BabelforgeError(f"captions.input.format {config.format!r}: use 'xtd', 'table' or 'img2dataset'")
    block: list = []
    # With a limit, stop taking rows once it is reached, before asking for the next: the row after
    # the last one taken would be counted kept by the reader (2,001 kept for a limit of 2,000).
    for count, (row, references) in enumerate(pairs if config.limit != 0 else (), start=1):
        block.append({**row, REFERENCES_COLUMN: [{"lang": lang, "text": text} for lang, text in references]})
        if len(block) == batch_rows:
            yield _caption_table(block)
            block = []
        if config.limit is not None and count >= config.limit:
            break
    if block:
        yield _caption_table(block)
    quarantine.check_fraction()


def _caption_table(rows: list[dict[str, Any]]):
    import pyarrow as pa

    references = pa.list_(pa.struct([("lang", pa.string()), ("text", pa.string())]))
    table = pa.Table.from_pylist([{k: v for k, v in row.items() if k != REFERENCES_COLUMN} for row in rows])
    for column in ("caption_id", "caption"):
        table = table.set_column(table.schema.get_field_index(column), column, table.column(column).cast(pa.string()))
    return table.append_column(REFERENCES_COLUMN, pa.array([row[REFERENCES_COLUMN] for row in rows], references))


def read_captions(fmt: str, path: str | Path, source_lang: str, registry) -> CaptionSet:
    """Dispatch on `captions.input.format`: `xtd` or `table` (CSV / TSV / JSONL)."""
    registry.get(source_lang)
    if fmt == "xtd":
        return read_xtd(path, source_lang, registry)
    if fmt == "table":
        return read_caption_table(path, source_lang, registry)
    raise BabelforgeError(f"captions.input.format {fmt!r}: use 'xtd', 'table' or 'img2dataset'")
