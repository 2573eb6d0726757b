"""The `captions.input` group of params.yaml: which caption set the caption stages read, in which
format (`babelforge.captions.readers` reads it). Its own module, so a stage that only names the
setting does not run every reader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from babelforge.core.bad_rows import BadRowPolicy
from babelforge.core.config import setting


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
