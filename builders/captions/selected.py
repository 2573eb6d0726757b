"""selected.parquet's rows: one per (caption_id, lang), the chosen hypothesis or the reason nothing
was kept (`select_rows`, pure), its Arrow schema, and a shard's part of the file with the source
rows riding along (`selected_part`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from babelforge.captions.quality import add_quality_flags
from babelforge.captions.select import KIWI_SCORE, choose, with_text_tags
from babelforge.captions.taggers import KIWI_TRUNCATED
from babelforge.core.taggers import Thresholds

SELECTED_COLUMNS = (
    "caption_id",
    "lang",
    "text",
    "hyp_rank",
    "mt_score",
    "kiwi_score",
    "kiwi_percentile",
    "is_bottom_25",
    "is_top_75",
    "chrf",
    "n_hypotheses",
    "n_passed",
    "reason",
)


def select_rows(
    scored: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[str, str]],
    thresholds: Thresholds,
    *,
    where: str,
    quality: bool = True,
) -> list[dict[str, Any]]:
    """One row per (caption_id, lang) in `pairs`, from scored hypothesis rows (pure).

    `scored` rows hold the hypothesis (`caption_id, lang, hyp_rank, text, mt_score`) and
    its attribute columns; a pair without any hypothesis gets reason `no_hypotheses`.
    `quality=False` leaves out the per-language percentiles (`add_quality_flags`), for rows
    chosen shard by shard whose percentiles are taken over all shards at the end. `where` names
    the thresholds' settings group in an error (`captions.select`).
    """
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for row in with_text_tags(scored):
        groups[(row["caption_id"], row["lang"])].append(row)
    rules = {lang: thresholds.for_language(lang, where) for lang in sorted({lang for _, lang in pairs})}
    out = []
    for caption_id, lang in pairs:
        choice = choose(groups.get((caption_id, lang), []), rules[lang])
        best = choice.best or {}
        out.append(
            {
                "caption_id": caption_id,
                "lang": lang,
                "text": best.get("text"),
                "hyp_rank": best.get("hyp_rank"),
                "mt_score": best.get("mt_score"),
                "kiwi_score": best.get(KIWI_SCORE),
                "chrf": best.get("chrf_v1__score"),
                "n_hypotheses": choice.n_hypotheses,
                "n_passed": choice.n_passed,
                "reason": choice.reason,
                # not a column of selected.parquet: quality.json counts the kept scores of a cut pair
                "kiwi_truncated": best.get(KIWI_TRUNCATED),
            }
        )
    if quality:
        add_quality_flags(out)
    return out


def selected_schema(source_schema):
    """The Arrow schema of selected.parquet: its own columns, then the source rows' other
    columns (fixed types, so every shard's row group has the same, whatever its nulls)."""
    import pyarrow as pa

    text, number, flag, count = pa.large_string(), pa.float64(), pa.bool_(), pa.int64()
    own = {
        "caption_id": text,
        "lang": text,
        "text": text,
        "hyp_rank": pa.int32(),
        "mt_score": number,
        "kiwi_score": number,
        "kiwi_percentile": number,
        "is_bottom_25": flag,
        "is_top_75": flag,
        "chrf": number,
        "n_hypotheses": count,
        "n_passed": count,
        "reason": text,
    }
    fields = [pa.field(name, own[name]) for name in SELECTED_COLUMNS]
    for field in source_schema:
        if field.name != "caption_id":
            kind = pa.large_string() if pa.types.is_string(field.type) else field.type
            fields.append(pa.field(field.name, kind))
    return pa.schema(fields)


def selected_part(rows: list[dict[str, Any]], source, schema):
    """A shard's rows of selected.parquet as an Arrow table of `schema`: the chosen rows with
    the source row (image, English caption, any extra input column) riding along untouched."""
    import pandas as pd
    import pyarrow as pa

    selected = pd.DataFrame(rows, columns=list(SELECTED_COLUMNS)).astype({"hyp_rank": "Int32"})
    selected = selected.merge(source, on="caption_id", how="left").sort_values(["lang", "caption_id"], kind="stable")
    return pa.Table.from_pandas(selected, preserve_index=False).select(schema.names).cast(schema)
