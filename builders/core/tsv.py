"""Strict reading of the project's small TSV tables (`resources/*.tsv`): one `TsvSpec` per table.

The tables are edited by hand and read by every build, so a slip (a row with a field too few or
too many, an empty key, the same key twice, a word where a number belongs) must stop the reader
with one line naming the file and line, never be read around: `csv.DictReader` alone pads a
short row with None and folds extra fields into a hidden key, so both used to pass silently.

A hand-written table's every field is also one value (`core.typed_text`): a line break other
than the row's own end (a lone `\r`, U+2028), a control, bidi or invisible format character or
more than `max_chars` characters is refused the same way, so a pasted name cannot hide a
character or start a row a reader would count differently.

`read_tsv(path, spec)` returns `(line, row)` pairs of strings exactly as written (no stripping,
no conversion): the readers turn them into their own types after these checks passed.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from babelforge.core.errors import BabelforgeError
from babelforge.core.typed_text import shown, value_problem


@dataclass(frozen=True)
class Check:
    """A value test for one column; `expected` completes "<column> 'x' is not ..."."""

    test: Callable[[str], bool]
    expected: str


def matching(pattern: str, expected: str) -> Check:
    compiled = re.compile(pattern)
    return Check(lambda value: compiled.fullmatch(value) is not None, expected)


def one_of(*values: str) -> Check:
    return Check(lambda value: value in values, "one of " + ", ".join(values))


INTEGER = matching(r"[0-9]+", "a whole number")
BOOLEAN = Check(lambda value: value in ("True", "False"), "True or False")
SHA256 = matching(r"[0-9a-f]{64}", "a sha256 (64 lower-case hex digits)")


@dataclass(frozen=True)
class TsvSpec:
    """What a table must look like.

    columns: every column, in file order (the header must be exactly these, unless `header` is
    False: then the file has none and `columns` names the fields). required: columns no row may
    leave empty. unique: column groups whose values no two rows share (a key: `("name",)`, a
    composite one: `("system", "code")`). checks: a value test per column, run on non-empty
    values. quoted: fields may be quoted the `csv` way (tables `csv.writer` writes); the
    hand-written tables are not, a `"` is an ordinary character there. max_chars: the longest
    value a field of a hand-written table may hold (checked with the other `typed_text` rules).
    comments: `#` lines are notes, skipped like blank lines (their line numbers kept).
    """

    columns: tuple[str, ...]
    required: tuple[str, ...] = ()
    unique: tuple[tuple[str, ...], ...] = ()
    checks: Mapping[str, Check] = field(default_factory=dict)
    header: bool = True
    quoted: bool = False
    max_chars: int = 500
    comments: bool = False  # lines starting `#` are notes (a derived table's provenance), read as blank lines


def tsv_rows(text: str, spec: TsvSpec, where: str) -> list[tuple[int, dict[str, str]]]:
    """The rows of a table's text as (line, {column: value}); blank lines are skipped.

    Raises BabelforgeError `where:line: ...` on the first problem.
    """
    quoting = csv.QUOTE_MINIMAL if spec.quoted else csv.QUOTE_NONE
    lone_cr = None if spec.quoted else re.search("\r(?!\n)", text)
    if lone_cr:  # `csv` would end a row there: the line numbers after it would be off by one
        line = text.count("\n", 0, lone_cr.start()) + 1
        raise BabelforgeError(f"{where}:{line}: a carriage return (U+000D) inside a row; a row ends with one line end")
    if spec.comments:  # blanked, not removed: the line numbers of the rows stay those of the file
        text = re.sub(r"(?m)^#[^\n]*", "", text)
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""), delimiter="\t", quoting=quoting, strict=True)
    rows: list[tuple[int, dict[str, str]]] = []
    seen: dict[tuple[str, ...], dict[tuple[str, ...], int]] = {group: {} for group in spec.unique}
    try:
        if spec.header:  # after the notes of a table with comments
            _check_header(next((f for f in reader if f), None) if spec.comments else next(reader, None), spec, where)
        for fields in reader:
            if not fields:
                continue
            row = _row(fields, spec, f"{where}:{reader.line_num}")
            _check_unique(row, seen, reader.line_num, f"{where}:{reader.line_num}")
            rows.append((reader.line_num, row))
    except csv.Error as error:  # strict mode: a stray quote in a quoted table
        raise BabelforgeError(f"{where}:{reader.line_num}: not a readable TSV row ({error})") from None
    return rows


def _check_header(header: list[str] | None, spec: TsvSpec, where: str) -> None:
    if header is None or tuple(header) != spec.columns:
        raise BabelforgeError(
            f"{where}:1: header is {chr(9).join(header or [])!r}, expected {chr(9).join(spec.columns)!r} "
            "(tab-separated, in this order)"
        )


def _row(fields: list[str], spec: TsvSpec, where: str) -> dict[str, str]:
    """One row's fields checked (count, required, value tests) as a dict."""
    if len(fields) != len(spec.columns):
        raise BabelforgeError(
            f"{where}: {len(fields)} fields, expected {len(spec.columns)} separated by tabs ({', '.join(spec.columns)})"
        )
    row = dict(zip(spec.columns, fields))
    for column, value in row.items():  # in file order: the message names the leftmost problem
        check = spec.checks.get(column)
        if column in spec.required and not value.strip():
            raise BabelforgeError(f"{where}: empty {column}; every row needs one")
        problem = None if spec.quoted else value_problem(value, spec.max_chars)
        if problem:
            raise BabelforgeError(f"{where}: {column} {shown(value)} {problem}")
        if value and check is not None and not check.test(value):
            raise BabelforgeError(f"{where}: {column} {value!r} is not {check.expected}")
    return row


def _check_unique(
    row: Mapping[str, str], seen: dict[tuple[str, ...], dict[tuple[str, ...], int]], line: int, where: str
):
    """Refuse a row repeating the values of a `unique` group; `seen` maps each group's values to their line."""
    for group, lines in seen.items():
        value = tuple(row[column] for column in group)
        if value in lines:
            raise BabelforgeError(
                f"{where}: {' '.join(group)} {' '.join(value)!r} appears twice (first on line {lines[value]})"
            )
        lines[value] = line


def read_tsv(path: str | os.PathLike, spec: TsvSpec) -> list[tuple[int, dict[str, str]]]:
    """`tsv_rows` of the file at `path` (UTF-8); a missing or undecodable file is one error line too."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BabelforgeError(f"{path}: no such file") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise BabelforgeError(f"{path}:{line}: not UTF-8 text") from None
    return tsv_rows(text, spec, str(path))
