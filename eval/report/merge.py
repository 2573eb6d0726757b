"""Every task's run document in one table, and the headline metrics `dvc metrics show` lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from babelforge.core.determinism import METRIC_DECIMALS, rounded
from babelforge.core.io import atomic_path
from babelforge.eval.documents import ROW_KEYS
from babelforge.eval.report.figures import display_names
from babelforge.eval.tasks import find

# Columns too wide or nested for the merged CSV (kept in the run JSON).
JSON_ONLY = ("per_class",)


def merge_rows(documents: Iterable[Mapping]):
    """Every run's rows in one DataFrame: a `task` column, JSON-only columns dropped, sorted. A row
    of a task over image sets gains `images_skipped`: the images of its dataset the run left out
    (the run's `quarantine`), so the table says over how many images each number was computed
    (`n_images` kept, `images_skipped` left out); `texts_truncated` comes with the rows."""
    import pandas as pd

    rows = []
    for document in documents:
        skipped = {name: entry.get("quarantined") for name, entry in (document.get("quarantine") or {}).items()}
        for row in document["rows"]:
            extra = {"images_skipped": skipped[row["dataset"]]} if row["dataset"] in skipped else {}
            rows.append({"task": document["task"], **{k: v for k, v in row.items() if k not in JSON_ONLY}, **extra})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    leading = ["task", *ROW_KEYS]
    frame = frame[leading + sorted(c for c in frame.columns if c not in leading)]
    sort_keys = [c for c in ("task", "model", "dataset", "lang", "prompt_set", "mvl_task", "k") if c in frame.columns]
    return frame.sort_values(list(dict.fromkeys(sort_keys)), kind="stable").reset_index(drop=True)


def left_out_lines(documents: Iterable[Mapping]) -> list[str]:
    """Per run: the images each dataset left out and the texts each model's text encoder cut (the
    report's log, beside the `images_skipped` and `texts_truncated` columns of results.csv)."""
    lines = []
    for document in documents:
        skipped = {name: entry.get("quarantined", 0) for name, entry in (document.get("quarantine") or {}).items()}
        cut = {model: entry["texts_truncated"] for model, entry in (document.get("text_truncation") or {}).items()}
        images = ", ".join(f"{name} {n}" for name, n in sorted(skipped.items())) or "no image set"
        texts = ", ".join(f"{model} {n}" for model, n in sorted(cut.items())) or "none recorded"
        lines.append(f"{document['task']}: images skipped: {images}; texts cut to the text encoder's length: {texts}")
    return lines


def write_csv(frame, path: str | Path) -> Path:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
    return Path(path)


# The headline `dvc metrics show` / `dvc exp show` list, per model: `<model>.<group>.<metric>`, the part
# after the model at most 30 characters (tests/eval/test_tasks.py). Each task's spec names its headline
# columns, its group's key, its own dataset and the column it headlines apart (babelforge.eval.tasks).
def headline_group(task: str, dataset: str, split: str | None) -> str:
    """`zs_en_fb`, `ret_xtd`, `mvl`: the task, the dataset where the task has several, the split value
    (zero-shot: the prompt set); a task no spec declares: its name and the dataset."""
    spec = find(task)
    if spec is None:
        return "_".join([task, dataset] + ([split] if split is not None else []))
    return spec.group(dataset, split)


def summary_metrics(frame, names: Mapping[str, str] | None = None) -> dict:
    """Per model (its display name: `eval.report.display_names`, else the id's last part), the
    headline numbers: means over languages, as `<model>.<group>.<metric>` (`s0.zs_tr.top1_100`)."""
    out: dict = {}
    if frame.empty:
        return out
    shown = display_names(sorted(frame["model"].astype(str).unique()), names)
    for model, part in frame.groupby("model", sort=True):
        entry: dict = {}
        for (task, dataset), rows in part.groupby(["task", "dataset"], sort=True):
            spec = find(task)
            columns = spec.headline if spec else ()
            split_by = spec.split_by if spec else None
            split = split_by is not None and split_by in rows
            for value, subset in rows.groupby(split_by, sort=True) if split else [(None, rows)]:
                values = {
                    short: rounded(float(subset[column].mean()), METRIC_DECIMALS)
                    for column, short in columns
                    if column in subset and subset[column].notna().any()
                }
                values["langs"] = int(subset["lang"].nunique())
                entry[headline_group(task, dataset, value)] = values
        out[shown[str(model)]] = entry
    return out
