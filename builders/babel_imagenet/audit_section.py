"""The audit's prompts section: per language and prompt set, prompts, fallback share, slot
strategies, validity flags and failed checks. Named by the `babel-imagenet-prompts` spec
(builders/babel_imagenet/dataset.py); the labels have no section, the audit checks them row by row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.errors import BabelforgeError
from babelforge.core.io import read_table
from babelforge.core.sections import NOT_BUILT, Section, source_mix


def prompts(path: str | Path | None) -> Section | None:

    table = _read_optional(path)
    if table is None:
        return None
    return Section(
        lambda lang: _per_language(table, lang, prompt_summary), languages=lambda: sorted(table["lang"].unique())
    )


def _read_optional(path: str | None):

    if not path or not Path(path).exists():
        return None
    return read_table(path)


def _per_language(table, lang: str, summarise) -> dict[str, Any]:
    if table is None:
        return {"status": NOT_BUILT}
    if "lang" not in table.columns:
        raise BabelforgeError("an optional audit input has no `lang` column; check paths.prompts / paths.captions")
    return summarise(table[table["lang"] == lang].to_dict("records"))


def prompt_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per prompt set (`prompt_set` column; one set when absent): prompt count, fallback
    share, strategies, the share of True for every other boolean column (the prompts
    stage's validity flags, whatever their names) and how often each check failed."""
    if not rows:
        return {"status": "no prompts for this language"}
    by_set: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_set.setdefault(str(row.get("prompt_set", "all")), []).append(row)
    return {
        "status": "built",
        "prompts": len(rows),
        "sets": {name: _prompt_set_summary(by_set[name]) for name in sorted(by_set)},
    }


def _prompt_set_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    flag_columns = sorted(
        column for column, value in rows[0].items() if isinstance(value, bool) and column != "fallback"
    )
    summary: dict[str, Any] = {"prompts": len(rows)}
    if "fallback" in rows[0]:
        summary["fallback_share"] = _bool_share(rows, "fallback")
    if "strategy" in rows[0]:
        summary["strategies"] = source_mix(str(row["strategy"]) for row in rows)
    summary["flag_shares"] = {column: _bool_share(rows, column) for column in flag_columns}
    if "failed" in rows[0]:
        summary["failed_checks"] = source_mix(check for row in rows for check in check_names(row["failed"]))
    return summary


def check_names(failed: Any) -> list[str]:
    """The check names of a prompt's `failed` cell: prompts.parquet joins them with commas
    (`"script,langid"`); a list is taken as it is; None or "" is none."""
    if failed is None:
        return []
    if isinstance(failed, str):
        return [name for name in failed.split(",") if name]
    return [str(name) for name in failed]


def _bool_share(rows: Sequence[Mapping[str, Any]], column: str) -> float:
    return round(sum(bool(row[column]) for row in rows) / len(rows), 4) if rows else 0.0
