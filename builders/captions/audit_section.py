"""The audit's MT captions section: per language, Kiwi score percentiles, mean chrF, why
captions kept no translation and how many Kiwi scores came from a cut pair; across languages
(the overview) the input's rows read, kept, quarantined per reason and truncated; and the Kiwi
scores' box plot. Named by the `mt-captions` spec (builders/captions/dataset.py); the audit calls
`captions` with selected.parquet's path, and the counts come from quality.json beside it (written
with selected.parquet by captions_select, from captions_translate's input.json): one source."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.captions.layout import QUALITY_FILE
from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_json, read_schema, read_table, value_counts
from babelforge.core.sections import Section, source_mix


def captions(path: str | Path | None) -> Section | None:
    """selected.parquet holds every caption x language of a run (millions of rows at training
    scale): each language's rows are read on their own, and only the columns the checks use."""

    if not path or not Path(path).exists():
        return None
    schema = read_schema(path)
    if "lang" not in schema.names:
        raise BabelforgeError(f"{path}: no `lang` column; check paths.captions")
    kiwi, chrf = caption_columns(schema)
    quality = read_quality(Path(path).with_name(QUALITY_FILE))
    columns = [column for column in ("reason", kiwi, chrf) if column in schema.names]
    languages = value_counts(path, "lang")
    boxes: dict[str, dict[str, Any]] = {}  # the plot's few numbers, kept from each language's one read

    def read(lang: str, names: list[str]):
        table = read_table(path, names, where=("lang", lang))
        if kiwi is not None and kiwi in names:
            boxes[lang] = box_stats(table[kiwi].dropna().to_numpy(), lang)
        return table

    def language(lang: str) -> dict[str, Any]:
        if lang not in languages or not columns:
            summary = caption_summary(languages.get(lang, 0), {}, kiwi, chrf)
        else:
            table = read(lang, columns)
            summary = caption_summary(languages[lang], {c: table[c].tolist() for c in columns}, kiwi, chrf)
        figures = (quality.get("languages") or {}).get(lang)
        if summary["status"] == "built" and figures is not None:
            summary["kiwi_truncated"] = kiwi_truncated(figures)
        return summary

    def distribution() -> dict[str, dict[str, Any]]:
        if kiwi is None:
            return {}
        for lang in sorted(set(languages) - set(boxes)):  # caption languages the audit has no labels for
            read(lang, [kiwi])
        return {lang: boxes[lang] for lang in sorted(languages)}

    return Section(
        language,
        overview=lambda: captions_overview(quality),
        distribution=distribution,
        languages=lambda: sorted(languages),
    )


def read_quality(path: Path) -> dict[str, Any]:
    """quality.json beside selected.parquet, or {} when it is not there (selected.parquet from before
    it existed: the overview then says so rather than showing no counts)."""
    return read_json(path) if path.is_file() else {}


def kiwi_truncated(figures: Mapping[str, Any]) -> dict[str, Any]:
    """Of one language's quality.json figures: the hypotheses Kiwi scored on the beginning of a
    (caption, hypothesis) pair longer than its encoder reads, and the kept translations among them."""
    return {"hypotheses": figures.get("n_kiwi_truncated"), "selected": figures.get("n_selected_kiwi_truncated")}


def captions_overview(quality: Mapping[str, Any]) -> dict[str, Any]:
    """summary.json's `captions` (and the mt-captions card's counts): the input's rows read, kept,
    quarantined per reason, left out and truncated (quality.json's `input`, i.e. input.json), and
    the Kiwi pairs cut, summed over languages."""
    if "input" not in quality:
        return {"status": f"no {QUALITY_FILE} beside selected.parquet: rerun `babelforge captions_select`"}
    per_language = [kiwi_truncated(figures) for figures in (quality.get("languages") or {}).values()]

    def total(key: str) -> int | None:  # None: a quality.json from before the Kiwi counts
        values = [entry[key] for entry in per_language]
        return None if None in values else sum(values)

    counts = quality["input"]
    order = ("rows", "kept", "quarantined", "reasons", "excluded", "truncated")  # as a reader follows a row
    return {
        "status": "built",
        "input": {**{key: counts[key] for key in order if key in counts}, **counts},
        "kiwi_truncated": {"hypotheses": total("hypotheses"), "selected": total("selected")},
    }


def caption_columns(schema) -> tuple[str | None, str | None]:
    """The Kiwi score and chrF columns of selected.parquet (its Arrow schema), found by name
    among the floating-point ones (not percentiles/flags)."""
    import pyarrow as pa

    numeric = [field.name for field in schema if pa.types.is_floating(field.type)]
    kiwi = next((c for c in numeric if "kiwi" in c.lower() and "percentile" not in c.lower()), None)
    chrf = next((c for c in numeric if "chrf" in c.lower()), None)
    return kiwi, chrf


def caption_summary(
    captions: int, columns: Mapping[str, Sequence[Any]], kiwi_column: str | None, chrf_column: str | None
) -> dict[str, Any]:
    """Kiwi score percentiles and mean chrF (over captions that have a reference) of one
    language's `captions` rows, given as columns (a language of a training-scale run has
    millions: a list per column, not a dict per row)."""
    if not captions:
        return {"status": "no captions for this language"}
    summary: dict[str, Any] = {"status": "built", "captions": captions}
    if "reason" in columns:
        # the captions stage says why a caption got no translation; a missing value (None, or the
        # NaN pandas reads for a null in a string column) or "" = one was kept
        summary["not_translated"] = source_mix(
            reason.split(":")[0] for reason in columns["reason"] if isinstance(reason, str) and reason
        )
    if kiwi_column:
        summary["kiwi_column"] = kiwi_column
        summary["kiwi_percentiles"] = percentiles(columns[kiwi_column])
    if chrf_column:
        scored = [float(value) for value in columns[chrf_column] if value is not None and not math.isnan(float(value))]
        summary["chrf"] = {
            "with_reference": len(scored),
            "mean": round(sum(scored) / len(scored), 2) if scored else None,
        }
    return summary


def percentiles(values: Sequence[float], points: Sequence[int] = (5, 10, 25, 50, 75, 90, 95)) -> dict[str, float]:
    """Linear-interpolated percentiles (numpy's default method), without numpy."""
    ordered = sorted(float(v) for v in values if v is not None and not math.isnan(float(v)))
    if not ordered:
        return {}
    result = {}
    for point in points:
        position = (len(ordered) - 1) * point / 100
        low, high = math.floor(position), math.ceil(position)
        value = ordered[low] + (ordered[high] - ordered[low]) * (position - low)
        result[f"p{point}"] = round(value, 4)
    return result


def box_stats(values, label: str) -> dict[str, Any]:
    """What one box of a box plot draws (matplotlib's statistics: quartiles, 1.5 IQR whiskers),
    without the outliers the plot leaves out: a few numbers per language, not every score."""
    from matplotlib import cbook

    stats = cbook.boxplot_stats(values, labels=[label])[0]
    stats["fliers"] = []
    return stats
