"""Small language registries in the real file's format, for tests that need a few languages.

Rows are tuples in `babelforge.core.languages.COLUMNS` order (a shorter tuple leaves the rest to
`defaults`) or dicts by column name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from babelforge.core.languages import COLUMNS

FLAGS = ("in_xlmr", "in_eval_100", "in_sib200", "in_babel_imagenet")


def write_registry(
    path: Path, rows: Sequence[Sequence[str] | Mapping[str, str]], defaults: Mapping[str, str] | None = None
) -> Path:
    """Write `rows` as a languages.tsv at `path`; unset flags are "True" unless `defaults` say otherwise."""
    base = {column: "" for column in COLUMNS} | {flag: "True" for flag in FLAGS} | dict(defaults or {})
    lines = ["\t".join(COLUMNS)]
    for row in rows:
        values = base | (dict(row) if isinstance(row, Mapping) else dict(zip(COLUMNS, row)))
        values["name"] = values["name"] or values["key"]  # the registry requires one
        values["iso639_3"] = values["iso639_3"] or values["key"][:3]
        values["script"] = values["script"] or values["key"][4:8]
        values["scripts"] = values["scripts"] or values["script"]
        lines.append("\t".join(values[column] for column in COLUMNS))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
