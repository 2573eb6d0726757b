"""img2dataset's output as a caption table: its Parquet files (or their folder), rows `key, caption,
url, status, ...`; only the images it downloaded count."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from babelforge.captions.formats.table import table_captions
from babelforge.core.bad_rows import Quarantine


def img2dataset_captions(
    path: Path, registry, quarantine: Quarantine
) -> Iterator[tuple[dict[str, Any], list[tuple[str, str]]]]:
    """(caption row, references) of every downloaded image's row: `key` is the caption id, `url` the
    image; a row whose `status` is not `success` is counted as `not_downloaded`."""
    return table_captions(
        path,
        registry,
        quarantine,
        id_column="key",
        image_column="url",
        excluded=lambda row: None if row.get("status", "success") == "success" else "not_downloaded",
    )
