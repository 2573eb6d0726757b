"""The audit's MVL-SIB section: per language and task, rows and label-position and topic balance;
across languages, rows per task. Named by the `mvl-sib` spec (builders/mvl_sib/dataset.py); the
audit calls `mvl_sib` with the folder of <task>/<lang>.parquet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from babelforge.core.io import read_arrow, read_schema
from babelforge.core.sections import NOT_BUILT, Section, source_mix


def mvl_sib(path: str | Path | None) -> Section | None:

    files = _mvl_sib_files(Path(path) if path else None)
    if not files:
        return None
    return Section(
        lambda lang: _mvl_sib_for(files, lang),
        overview=lambda: mvl_sib_overview(files),
        languages=lambda: sorted({lang for paths in files.values() for lang in paths}),
    )


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
    tasks = {task: _task_counts(paths[lang]) for task, paths in files.items() if lang in paths}
    if not tasks:
        return {"status": "language not in MVL-SIB"}
    return _summary_of_counts(tasks)


def _task_counts(path: Path) -> tuple[int, dict[str, dict[str, int]]]:
    """(rows, {column: {value as text: rows}}) of one task file, counted by Arrow on the
    columns the balance check reads (a task table's other columns hold whole sentences): no
    row becomes a Python object. A value's text is the one `balance` gives the value as pandas
    reads it (an integer column with a null reads as floats: `1.0`, `nan`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = read_arrow(path, columns=_balance_columns(path))
    counts: dict[str, dict[str, int]] = {}
    for name in BALANCED & set(table.column_names):  # the fallback column is read for its rows only
        found = pc.value_counts(table.column(name))
        # the distinct values as pandas reads them, with the file's pandas metadata (an `Int64` column)
        values = pa.table({name: found.field("values")}).replace_schema_metadata(table.schema.metadata)
        column: dict[str, int] = {}
        for row, rows in zip(values.to_pandas().to_dict("records"), found.field("counts").to_pylist()):
            column[str(row[name])] = column.get(str(row[name]), 0) + rows
        counts[name] = column
    return table.num_rows, counts


def _balance_columns(path: Path) -> list[str]:
    """Only what the balance check reads: a task table's other columns hold whole sentences."""
    names = read_schema(path).names
    return [column for column in ("label", "topic", "category") if column in names] or names[:1]


BALANCED = {"label", "topic", "category"}  # the columns whose values `_summary_of_counts` balances


def _summary_of_counts(tasks: Mapping[str, tuple[int, Mapping[str, Mapping[str, int]]]]) -> dict[str, Any]:
    """`mvl_sib_summary` from each task's row count and value counts per column."""
    summary: dict[str, Any] = {"status": "built", "tasks": {}}
    for task in sorted(tasks):
        rows, counts = tasks[task]
        entry: dict[str, Any] = {"rows": rows}
        if rows and "label" in counts:
            entry["label_balance"] = balance_counts(counts["label"])
        topic_column = next((c for c in ("topic", "category") if rows and c in counts), None)
        if topic_column:
            entry["topic_balance"] = balance_counts(counts[topic_column])
        summary["tasks"][task] = entry
    return summary


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
    return balance_counts(source_mix(str(value) for value in values))


def balance_counts(counts: Mapping[str, int]) -> dict[str, Any]:
    """`balance` of values already counted: {value as text: rows}."""
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
