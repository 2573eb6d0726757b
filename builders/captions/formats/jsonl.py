"""JSON Lines caption tables: one JSON object per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.captions.formats.packed import UTF8_BOM
from babelforge.core.bad_rows import BadRow, raw_text


def jsonl_rows(path: Path) -> Iterator[tuple[str, int, dict[str, Any] | BadRow]]:
    """(file, line number, row) of every non-blank line; a line that is not UTF-8 or not a JSON object is a BadRow."""
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
