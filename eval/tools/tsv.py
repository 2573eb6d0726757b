"""Reading the TSV tables the eval tools take (correlate, cider, clipscore_pairs)."""

from __future__ import annotations

from pathlib import Path

from babelforge.core.errors import BabelforgeError


def read_tsv(path: str | Path):
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise BabelforgeError(f"table {path} does not exist")
    try:
        # Cells are read as written: "NA" or "nan" may be a caption or a language code, and an
        # empty cell stays an empty string (numeric columns go through pd.to_numeric).
        return pd.read_csv(path, sep="\t", keep_default_na=False)
    except Exception as error:  # pandas raises several parser error types
        raise BabelforgeError(f"table {path}: not a readable TSV ({error})") from None


def key_columns(option: str | None) -> list[str]:
    """`--on a,b` -> ["a", "b"]."""
    return [k.strip() for k in option.split(",") if k.strip()] if option else []


def check_columns(table, columns, name) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise BabelforgeError(f"{name}: no column {', '.join(map(repr, missing))} (has: {', '.join(table.columns)})")
