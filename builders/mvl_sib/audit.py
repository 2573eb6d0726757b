"""The audit's MVL-SIB section: per language and task, rows and label-position and topic balance;
across languages, rows per task. Named by the `mvl-sib` spec (builders/mvl_sib/dataset.py); the
audit calls `mvl_sib` with the folder of <task>/<lang>.parquet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.io import read_table
from babelforge.core.sections import NOT_BUILT, Section, source_mix


def mvl_sib(path: str | Path | None) -> Section | None:

    files = _mvl_sib_files(Path(path) if path else None)
    if not files:
        return None
    return Section(lambda lang: _mvl_sib_for(files, lang), overview=lambda: mvl_sib_overview(files))


def _mvl_sib_files(root: Path | None) -> dict[str, dict[str, Path]]:
    """{task: {lang: path}} for data/mvl_sib/<task>/<lang>.parquet."""
    if root is None or not root.is_dir():
        return {}
    files: dict[str, dict[str, Path]] = {}
    for path in sorted(root.glob("*/*.parquet")):
        files.setdefault(path.parent.name, {})[path.stem] = path
    return files


def _mvl_sib_for(files: dict[str, dict[str, Path]], lang: str) -> dict[str, Any]:

    if not files:
        return {"status": NOT_BUILT}
    tasks = {
        task: read_table(paths[lang], columns=_balance_columns(paths[lang])).to_dict("records")
        for task, paths in files.items()
        if lang in paths
    }
    if not tasks:
        return {"status": "language not in MVL-SIB"}
    return mvl_sib_summary(tasks)


def _balance_columns(path: Path) -> list[str]:
    """Only what the balance check reads: a task table's other columns hold whole sentences."""
    import pyarrow.parquet as pq

    names = pq.read_schema(path).names
    return [column for column in ("label", "topic", "category") if column in names] or names[:1]


def mvl_sib_overview(files: dict[str, dict[str, Path]]) -> dict[str, Any]:
    """Rows per task across all languages (from Parquet metadata only): equal counts = balanced."""
    import pyarrow.parquet as pq

    if not files:
        return {"status": NOT_BUILT}
    tasks = {}
    for task, paths in files.items():
        rows = {lang: pq.read_metadata(path).num_rows for lang, path in paths.items()}
        tasks[task] = {
            "languages": len(rows),
            "rows_min": min(rows.values()),
            "rows_max": max(rows.values()),
            "balanced": min(rows.values()) == max(rows.values()),
        }
    return {"status": "built", "tasks": tasks}


def balance(values: Iterable[Any]) -> dict[str, Any]:
    """Counts per value and max/min ratio (1.0 = perfectly balanced)."""
    counts = source_mix(str(value) for value in values)
    if not counts:
        return {"counts": {}, "max_min_ratio": None}
    ratio = max(counts.values()) / min(counts.values())
    return {"counts": dict(sorted(counts.items())), "max_min_ratio": round(ratio, 4)}


def mvl_sib_summary(rows_per_task: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """Per task: rows, label-position balance, topic balance (when the rows carry a topic)."""
    summary: dict[str, Any] = {"status": "built", "tasks": {}}
    for task in sorted(rows_per_task):
        rows = rows_per_task[task]
        entry: dict[str, Any] = {"rows": len(rows)}
        if rows and "label" in rows[0]:
            entry["label_balance"] = balance(row["label"] for row in rows)
        topic_column = next((c for c in ("topic", "category") if rows and c in rows[0]), None)
        if topic_column:
            entry["topic_balance"] = balance(row[topic_column] for row in rows)
        summary["tasks"][task] = entry
    return summary
