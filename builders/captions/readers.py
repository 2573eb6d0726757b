"""Caption sources: the XTD / xFlickrCO JSON layout, plain CSV / TSV / JSONL / Parquet tables and
img2dataset's Parquet output.

`stream_captions` is what the translate stage reads: the caption set as a stream of pyarrow
tables, so a caption set of millions of rows never sits in memory. The whole-set readers
below return a `CaptionSet`: one row per English (source) caption with
`caption_id, image, caption` plus any other input columns carried through untouched,
and the human translations the source ships with (XTD has ten languages), keyed by the
registry key of their language so chrF can be computed against them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from babelforge.core.bad_rows import (
    FAIL_FAST,
    BadRow,
    BadRowPolicy,
    Quarantine,
    has_undecodable,
    id_problem,
    image_problem,
    raw_text,
    screen_caption_lists,
    summary_line,
    text_problem,
)
from babelforge.core.config import setting
from babelforge.core.errors import BabelforgeError

# Columns every caption row has; the rest of a row is carried through as it came.
CORE_COLUMNS = ("caption_id", "image", "caption")

# XTD and xFlickrCO name languages with their own two-letter codes, which are not all
# ISO 639-1 ("jp" is Japanese). Their Chinese is Simplified (e.g. 联, 队), so zh is
# zho_Hans, not the Traditional zho_Hant. Every key is checked against the registry.
XTD_LANGUAGE_KEYS = {
    "en": "eng_Latn",
    "de": "deu_Latn",
    "es": "spa_Latn",
    "fr": "fra_Latn",
    "id": "ind_Latn",
    "it": "ita_Latn",
    "ja": "jpn_Jpan",
    "jp": "jpn_Jpan",
    "ko": "kor_Hang",
    "pl": "pol_Latn",
    "ru": "rus_Cyrl",
    "tr": "tur_Latn",
    "zh": "zho_Hans",
}

# In CSV / JSONL input a column `ref_<registry key>` (e.g. `ref_deu_Latn`) holds a human
# translation of the caption; it is used as a chrF reference and still carried through.
REFERENCE_PREFIX = "ref_"
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


@dataclass(frozen=True)
class InputConfig:
    """The `captions.input` group of params.yaml: the English caption set to read."""

    format: Literal["xtd", "table", "img2dataset"] = setting(
        "xtd",
        "xtd (XTD / xFlickrCO JSON), table (CSV / TSV / JSONL / Parquet: id, image, caption, ...) or "
        "img2dataset (its Parquet files or their folder: key, caption, url, status, ...)",
    )
    path: str = setting("data/raw/xtd/xtd.json", "the caption file")
    source: str = setting("eng_Latn", "registry key of the captions' language")
    targets: list[str] = setting(
        [
            "deu_Latn",
            "spa_Latn",
            "fra_Latn",
            "ita_Latn",
            "jpn_Jpan",
            "kor_Hang",
            "pol_Latn",
            "rus_Cyrl",
            "tur_Latn",
            "zho_Hans",
        ],
        "registry keys of the languages to translate into (XTD's ten)",
    )
    limit: int | None = setting(None, "the first N captions only (null: all)", minimum=1)
    on_bad_row: str = setting(
        "skip", "a row that cannot be read: skip (quarantine it, see quarantine/) or fail (stop at it)"
    )
    max_bad_fraction: float = setting(
        0.01, "stop when more than this share of the rows is bad (a systemic cause)", minimum=0, maximum=1
    )

    @property
    def policy(self) -> BadRowPolicy:
        return BadRowPolicy(self.on_bad_row, self.max_bad_fraction)


@dataclass
class CaptionSet:
    source_lang: str  # registry key of the captions' language
    captions: list[dict[str, Any]]  # caption_id, image, caption, extras...
    references: list[tuple[str, str, str]] = field(default_factory=list)  # (caption_id, lang, text)

    def limited(self, limit: int | None) -> CaptionSet:
        """The first `limit` captions (and their references); all when limit is None."""
        if limit is None:
            return self
        kept = self.captions[:limit]
        ids = {row["caption_id"] for row in kept}
        return CaptionSet(self.source_lang, kept, [ref for ref in self.references if ref[0] in ids])


def xtd_key(code: str, registry) -> str:
    """Registry key of an XTD/xFlickrCO language code; an error naming the code if unknown."""
    if code not in XTD_LANGUAGE_KEYS:
        raise BabelforgeError(
            f"XTD language code {code!r} has no registry key; add it to XTD_LANGUAGE_KEYS "
            "in builders/captions/readers.py"
        )
    return registry.get(XTD_LANGUAGE_KEYS[code]).key


def read_xtd(
    path: str | Path, source_lang: str, registry, quarantine: Quarantine | None = None, limit: int | None = None
) -> CaptionSet:
    """`{"images": [...], "captions": {code: [[caption], ...]}}`, captions aligned with images.

    caption_id is the image file name without extension (unique in both releases); an
    image with several captions in the source language gets `<stem>#<k>` ids. A source caption
    that cannot be translated (empty, control characters, only a URL) goes to `quarantine`
    (default: stop at it), numbered by its image's position. `limit`: read up to that many good
    captions (the rest is neither read nor counted).
    """
    quarantine = quarantine or Quarantine(FAIL_FAST, "captions")
    path = Path(path)
    images, by_code = read_caption_document(path, "captions.input.path")
    keys = {code: xtd_key(code, registry) for code in by_code}
    source_codes = [code for code, key in keys.items() if key == source_lang]
    if not source_codes:
        raise BabelforgeError(f"{path}: no captions in {source_lang} (the file has {', '.join(sorted(by_code))})")
    stems = [Path(name).stem for name in images]
    if len(set(stems)) != len(stems):
        raise BabelforgeError(f"{path}: image names are not unique, so they cannot be caption ids")
    source = screen_caption_lists(by_code[source_codes[0]], str(path), quarantine, limit)
    rows, id_of = [], {}
    for index, (image, stem, texts) in enumerate(zip(images, stems, source)):
        for k, text in enumerate(texts):
            if text is not None:  # None: a bad caption, quarantined (the others keep their #k)
                caption_id = stem if len(texts) == 1 else f"{stem}#{k}"
                rows.append({"caption_id": caption_id, "image": image, "caption": text})
        id_of[index] = stem if len(texts) == 1 and texts[0] is not None else None
    references = []
    for code, captions in by_code.items():
        if keys[code] == source_lang:
            continue
        for index, entry in enumerate(captions):
            texts = entry if isinstance(entry, list) else [entry]
            # A reference belongs to one source caption: only images with a single one. A reference
            # that is no usable text is no reference (it scores nothing, so it is not counted).
            if id_of.get(index) is not None and texts and text_problem(texts[0]) is None:
                references.append((id_of[index], keys[code], texts[0]))
    return CaptionSet(source_lang, rows, references)


def read_caption_document(path: Path, setting_name: str) -> tuple[list[str], dict[str, list]]:
    """(images, {language code: one caption or list of captions per image}) of a caption set in the
    XTD / xFlickrCO layout, `{"images": [...], "captions": {code: [...]}}`: one line naming the file
    when it is missing, not JSON (cut off?), not this layout, or a language's captions do not line up
    with the images. Bytes that are not UTF-8 are kept as surrogates, so the caption holding them,
    not the file, is bad (`screen_caption_lists`)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BabelforgeError(f"{path}: caption file not found; check {setting_name}") from None
    except IsADirectoryError:
        raise BabelforgeError(f"{path}: a folder, not a caption file; check {setting_name}") from None
    refuse_packed(path, raw[:16], "JSON")
    try:
        data = json.loads(raw.removeprefix(UTF8_BOM).decode("utf-8", errors="surrogateescape"))
    except json.JSONDecodeError as error:
        raise BabelforgeError(
            f"{path}:{error.lineno}:{error.colno}: not JSON ({error.msg}); a file cut off? fetch it again"
        ) from None
    images = data.get("images") if isinstance(data, dict) else None
    by_code = data.get("captions") if isinstance(data, dict) else None
    if not isinstance(images, list) or not isinstance(by_code, dict):
        raise BabelforgeError(f'{path}: not the XTD layout {{"images": [...], "captions": {{code: [...]}}}}')
    bad_names = [name for name in images if not isinstance(name, str) or not name or has_undecodable(name)]
    if bad_names:
        raise BabelforgeError(f"{path}: image {raw_text(bad_names[0])} is not a file name")
    for code, captions in by_code.items():
        if not isinstance(captions, list) or len(captions) != len(images):
            count = len(captions) if isinstance(captions, list) else "no list of"
            raise BabelforgeError(
                f"{path}: {count} {code} captions for {len(images)} images; a caption set has one entry "
                "(a caption or a list of them) per image, in the images' order"
            )
    return images, by_code


def refuse_packed(path: Path, head: bytes, expected: str) -> None:
    """One line when a file that should be text (`expected`: JSON Lines, CSV...) starts with the
    bytes of a packed format (PACKED): gzip bytes named .jsonl are not a broken JSON Lines file."""
    for magic, (what, remedy) in PACKED.items():
        if re.match(magic, head):
            raise BabelforgeError(f"{path}: {what} bytes, not {expected}; {remedy}")


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
        yield from _jsonl_rows(path)
    elif path.suffix in (".csv", ".tsv"):
        yield from _delimited_rows(path, "\t" if path.suffix == ".tsv" else ",")
    elif path.suffix == ".parquet" or path.is_dir():
        yield from _parquet_rows(path, batch_rows)
    else:
        raise BabelforgeError(f"{path}: unknown caption table type; use .csv, .tsv, .jsonl or .parquet")


def _jsonl_rows(path: Path) -> Iterator[tuple[str, int, dict[str, Any] | BadRow]]:
    # Read as bytes and decoded a line at a time: one line of broken bytes is one bad row.
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1:
                line = line.removeprefix(UTF8_BOM)
            if not line.strip():
                continue
            try:
                row = json.loads(line.decode("utf-8"))
            except UnicodeDecodeError:
                yield str(path), number, BadRow(str(path), number, raw_text(line), "invalid_utf8")
                continue
            except ValueError:
                yield str(path), number, BadRow(str(path), number, raw_text(line), "bad_json")
                continue
            if not isinstance(row, dict):
                yield str(path), number, BadRow(str(path), number, raw_text(line), "not_an_object")
                continue
            yield str(path), number, row


class _Lines:
    """The lines a csv reader pulls, with the ones of its last row kept (`taken`) and a way to hand
    lines back (`again`), so the lines an unclosed quote swallowed are read again as rows."""

    def __init__(self, lines: Iterator[str]):
        self.lines = lines
        self.pending: list[str] = []  # handed back, next first (reversed)
        self.taken: list[str] = []

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.pending.pop() if self.pending else next(self.lines)
        self.taken.append(line)
        return line

    def again(self, lines: list[str]) -> None:
        self.pending.extend(reversed(lines))


def _swallowed_rows(fields: list[str], lines: list[str], width: int, delimiter: str, quoting: int) -> bool:
    """True when a row that spans lines is an unclosed quote swallowing rows, not a caption with a
    line break: it has the wrong number of fields, a field over the csv module's size limit, or a
    line after its first that reads as a whole row by itself (a caption's own line break is
    followed by the caption's rest, never by `width` fields when the caption is not the first)."""
    if len(fields) != width:
        return True
    for line in lines[1:]:
        alone = next(csv.reader([line.rstrip("\r\n")], delimiter=delimiter, quoting=quoting), [])
        if len(alone) == width:
            return True
    return False


def _delimited_rows(path: Path, delimiter: str) -> Iterator[tuple[str, int, dict[str, Any] | BadRow]]:
    """CSV rows (RFC 4180 quoting: a quoted field may hold the delimiter or a line break) or TSV rows
    (no quoting, as the project's TSV tables: a quote is text, so `"Quoted" title` keeps its quotes);
    a BOM and CRLF line ends are read. Bytes that are not UTF-8 are read as surrogates
    (surrogateescape) so that the row holding them, not the file, is bad. A quote that is never
    closed swallows the lines after it: its first line is a `malformed_quote` row and the rest are
    read again as rows."""
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    with path.open("rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors="surrogateescape", newline="")
        lines = _Lines(text)
        reader = csv.reader(lines, delimiter=delimiter, quoting=quoting)
        try:
            header = next(reader, None)
        except csv.Error as error:  # the header runs past csv's field limit: no table to read rows of
            raise BabelforgeError(f"{path}:1: the header is not a {path.suffix[1:].upper()} row ({error})") from None
        if header is None:
            return
        if any(has_undecodable(name) for name in header):
            raise BabelforgeError(f"{path}:1: the header is not UTF-8; save the file as UTF-8")
        number = len(lines.taken)  # lines read so far
        while True:
            lines.taken = []
            try:
                fields = next(reader, None)
                broken = False
            except csv.Error:  # a field over csv's size limit: an unclosed quote ran on
                fields, broken = [], True
            if fields is None:
                return
            start, number = number + 1, number + len(lines.taken)
            if not lines.taken:
                return
            if broken or (
                len(lines.taken) > 1 and _swallowed_rows(fields, lines.taken, len(header), delimiter, quoting)
            ):
                reason = "field_too_long" if broken and len(lines.taken) == 1 else "malformed_quote"
                yield str(path), start, BadRow(str(path), start, raw_text(lines.taken[0]), reason)
                lines.again(lines.taken[1:])
                number = start
                continue
            if not fields:
                continue  # a blank line is no row
            joined = delimiter.join(fields)
            if any(has_undecodable(field) for field in fields):
                yield str(path), start, BadRow(str(path), start, raw_text(joined), "invalid_utf8")
            elif len(fields) != len(header):
                yield str(path), start, BadRow(str(path), start, raw_text(joined), "ragged_row")
            else:
                yield str(path), start, dict(zip(header, fields))


def _parquet_rows(path: Path, batch_rows: int) -> Iterator[tuple[str, int, dict[str, Any]]]:
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


class SeenIds:
    """The ids a stream has had so far, as sorted runs of 16-byte digests: 16 bytes per id
    (a set of Python strings costs ~100), so checking CC3M's 3.3 M ids holds ~53 MB. Runs
    merge when one grows as long as the one before (a binary counter): O(n log n) overall."""

    def __init__(self):
        self.runs: list = []

    @staticmethod
    def digests(ids: list[str]):

        return np.array([hashlib.blake2b(i.encode("utf-8"), digest_size=16).digest() for i in ids], dtype="S16")

    def add(self, ids: list[str]) -> list[int]:
        """Add a block of ids; the positions in `ids` of those seen before (earlier in the block or
        in an earlier block), which are not added: the first of each id is the one kept."""

        digests = self.digests(ids)
        repeated = np.zeros(len(ids), dtype=bool)
        for run in self.runs:
            at = np.minimum(np.searchsorted(run, digests), len(run) - 1)
            repeated |= run[at] == digests
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests.tolist()):
            if not repeated[position] and first.setdefault(digest, position) != position:
                repeated[position] = True
        new = digests[~repeated]
        if len(new):
            self.runs.append(np.sort(new))
        while len(self.runs) > 1 and len(self.runs[-2]) <= len(self.runs[-1]):
            last = self.runs.pop()
            self.runs[-1] = np.sort(np.concatenate([self.runs[-1], last]))
        return np.flatnonzero(repeated).tolist()


def _table_captions(
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
    for caption, refs in _table_captions(Path(path), registry, quarantine or Quarantine(FAIL_FAST, "captions")):
        captions.append(caption)
        references += [(caption["caption_id"], lang, text) for lang, text in refs]
    return CaptionSet(source_lang, captions, references)


# The column of a streamed caption batch that holds the caption's human translations
# (list of {lang, text}); the translate stage splits it off into `references/`.
REFERENCES_COLUMN = "__references__"


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
        pairs = _table_captions(path, registry, quarantine)
    elif config.format == "img2dataset":
        # img2dataset's rows: `key, caption, url, status, ...`; only images it downloaded count.
        pairs = _table_captions(
            path,
            registry,
            quarantine,
            id_column="key",
            image_column="url",
            excluded=lambda row: None if row.get("status", "success") == "success" else "not_downloaded",
        )
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
