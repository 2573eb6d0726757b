"""What every caption reader gives: rows of `caption_id, image, caption` (and the input's other
columns), and the human translations that come with them (`CaptionSet`, `ref_<key>` columns)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Columns every caption row has; the rest of a row is carried through as it came.
CORE_COLUMNS = ("caption_id", "image", "caption")

# In CSV / JSONL input a column `ref_<registry key>` (e.g. `ref_deu_Latn`) holds a human
# translation of the caption; it is used as a chrF reference and still carried through.
REFERENCE_PREFIX = "ref_"

# The column of a streamed caption batch that holds the caption's human translations
# (list of {lang, text}); the translate stage splits it off into `references/`.
REFERENCES_COLUMN = "__references__"


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
