"""Every task's run document in one table, and the headline metrics `dvc metrics show` lists."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from babelforge.core.determinism import METRIC_DECIMALS, rounded
from babelforge.core.io import atomic_path
from babelforge.eval.documents import ROW_KEYS
from babelforge.eval.report.figures import display_names

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
# after the model at most 30 characters (tests/eval/test_report.py). The comparable ones lead: top1_100
# (a fixed 100-class control) and top1_norm (chance-normalised top-1) do not move when a label set
# gains or loses small languages; top1 does (chance is 1 / classes). balanced_accuracy is left out: it
# equals top1 whenever every class has as many images (ImageNet's validation set: 50 each).
HEADLINE = {
    "zeroshot": {
        "top1_100": "top1_100",
        "top1_norm": "top1_norm",
        "top1": "top1",
        "chance_top1": "chance",
        "top5": "top5",
    },
    "retrieval": {"mean_recall": "recall", "t2i_r@1": "t2i_r1", "i2t_r@1": "i2t_r1"},
    "clipscore": {"clipscore": "clipscore", "ref_clipscore": "ref", "pairwise_accuracy": "pair_acc"},
    "mvl_sib": {"accuracy": "acc"},
}
TASK_KEYS = {"zeroshot": "zs", "retrieval": "ret", "clipscore": "cs", "mvl_sib": "mvl"}
# Prompt sets (zero-shot) by their short key: a language evaluated with two fallback sets must not
# count twice in one mean, so each set is its own group.
PROMPT_KEYS = {
    "translated": "tr",
    "english": "en",
    "english-fallback": "en_fb",
    "label": "lbl",
    "label-fallback": "lbl_fb",
}
DEFAULT_DATASETS = {"zeroshot": "babel_imagenet", "mvl_sib": "mvl_sib"}  # the task's own: not repeated


def headline_group(task: str, dataset: str, prompt_set: str | None) -> str:
    """`zs_en_fb`, `ret_xtd`, `mvl`: the task, the dataset where the task has several, the prompt set."""
    parts = [TASK_KEYS.get(task, task)]
    if dataset != DEFAULT_DATASETS.get(task):
        parts.append(dataset)
    if prompt_set is not None:
        parts.append(PROMPT_KEYS.get(prompt_set, prompt_set))
    return "_".join(parts)


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
            columns = HEADLINE.get(task, {})
            split = task == "zeroshot" and "prompt_set" in rows
            for prompt_set, subset in rows.groupby("prompt_set", sort=True) if split else [(None, rows)]:
                values = {
                    short: rounded(float(subset[column].mean()), METRIC_DECIMALS)
                    for column, short in columns.items()
                    if column in subset and subset[column].notna().any()
                }
                values["langs"] = int(subset["lang"].nunique())
                entry[headline_group(task, dataset, prompt_set)] = values
        out[shown[str(model)]] = entry
    return out
