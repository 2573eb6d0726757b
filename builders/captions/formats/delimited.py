"""CSV and TSV caption tables: a header row, then one row per caption."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.core.bad_rows import BadRow, has_undecodable, raw_text
from babelforge.core.errors import BabelforgeError


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


def delimited_rows(path: Path, delimiter: str) -> Iterator[tuple[str, int, dict[str, Any] | BadRow]]:
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
