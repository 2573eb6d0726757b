"""Every task's run document in one table, and the headline metrics `dvc metrics show` lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from babelforge.core.determinism import METRIC_DECIMALS, rounded
from babelforge.core.io import atomic_path
from babelforge.eval.documents import ROW_KEYS

# Columns too wide or nested for the merged CSV (kept in the run JSON).
JSON_ONLY = ("per_class",)


def merge_rows(documents: Iterable[Mapping]):
    """Every run's rows in one DataFrame: a `task` column, JSON-only columns dropped, sorted."""
    import pandas as pd

    rows = []
    for document in documents:
        for row in document["rows"]:
            rows.append({"task": document["task"], **{k: v for k, v in row.items() if k not in JSON_ONLY}})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    leading = ["task", *ROW_KEYS]
    frame = frame[leading + sorted(c for c in frame.columns if c not in leading)]
    sort_keys = [c for c in ("task", "model", "dataset", "lang", "prompt_set", "mvl_task", "k") if c in frame.columns]
    return frame.sort_values(list(dict.fromkeys(sort_keys)), kind="stable").reset_index(drop=True)


def write_csv(frame, path: str | Path) -> Path:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
    return Path(path)


def summary_metrics(frame) -> dict:
    """Per model: the headline numbers `dvc metrics show` lists (means over languages).

    Zero-shot rows are split by prompt set (`zeroshot/<dataset>/<prompt_set>`): a language
    evaluated with two fallback sets must not count twice in one mean.
    """
    out: dict = {}
    if frame.empty:
        return out
    for model, part in frame.groupby("model", sort=True):
        entry = {}
        for (task, dataset), rows in part.groupby(["task", "dataset"], sort=True):
            columns = {
                "zeroshot": ["top1", "top5", "balanced_accuracy", "top1_100"],
                "retrieval": ["t2i_r@1", "i2t_r@1", "mean_recall"],
                "clipscore": ["clipscore", "ref_clipscore", "pairwise_accuracy"],
                "mvl_sib": ["accuracy"],
            }.get(task, [])
            split = task == "zeroshot" and "prompt_set" in rows
            for prompt_set, subset in rows.groupby("prompt_set", sort=True) if split else [(None, rows)]:
                values = {
                    c: rounded(float(subset[c].mean()), METRIC_DECIMALS)
                    for c in columns
                    if c in subset and subset[c].notna().any()
                }
                values["n_languages"] = int(subset["lang"].nunique())
                entry[f"{task}/{dataset}" + (f"/{prompt_set}" if prompt_set is not None else "")] = values
        out[str(model)] = entry
    return out
