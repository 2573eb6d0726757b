"""Result rows -> run JSON, one merged CSV, DVC metrics and plots.

Every row carries `ROW_KEYS`: model id, revision, dataset, dataset version (the DVC
hash of the input artifact from dvc.lock when it is a tracked output, else the sha256
of its content), language, prompt set and seed. A run JSON holds the rows of one task
plus the provenance record; `merge_rows` flattens every run into one table.

Plots (matplotlib, Agg backend, PNG with fixed metadata so reruns are byte-stable):
- accuracy per language ordered by class count, with the resource-group bands;
- benchmark vs retrieval scatter with a least-squares line and its 95 % band;
- per-language correlation heatmap (across models) between zero-shot and retrieval.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np

from builders.core.io import atomic_path, sha256_file

ROW_KEYS = ("model", "revision", "dataset", "dataset_version", "lang", "prompt_set", "seed")
GROUP_ORDER = ("very-low", "low", "mid", "high")
GROUP_COLORS = {"very-low": "#fde0dd", "low": "#fff7bc", "mid": "#e5f5e0", "high": "#deebf7"}
# Columns too wide or nested for the merged CSV (kept in the run JSON).
JSON_ONLY = ("per_class",)


def _dvc_lock_outs(lock_path: Path) -> dict[str, str]:
    import yaml

    if not lock_path.is_file():
        return {}
    lock = yaml.safe_load(lock_path.read_text(encoding="utf-8")) or {}
    outs = {}
    for stage in (lock.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            digest = out.get("md5") or out.get("hash")
            if out.get("path") and digest:
                outs[Path(out["path"]).as_posix()] = f"md5:{digest}"
    return outs


def dataset_version(path: str | Path, lock_path: str | Path = "dvc.lock") -> str:
    """The DVC hash of `path` (or of the tracked output folder that holds it), else its sha256."""
    path = Path(path)
    outs = _dvc_lock_outs(Path(lock_path))
    for candidate in [path, *path.parents]:
        if candidate.as_posix() in outs:
            return outs[candidate.as_posix()]
    if path.is_dir():
        from eval.models import directory_hash

        return "sha256:" + directory_hash(path)
    if path.is_file():
        return "sha256:" + sha256_file(path)
    return "absent"


def run_document(task: str, rows: Sequence[Mapping], provenance: Mapping) -> dict:
    missing = [key for row in rows for key in ROW_KEYS if key not in row]
    if missing:
        raise ValueError(f"result rows lack {sorted(set(missing))}")
    return {"task": task, "provenance": dict(provenance), "rows": [json_safe(dict(row)) for row in rows]}


def json_safe(value):
    """JSON-safe: NaN -> None, numpy scalars -> Python, dict keys -> str."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


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
            columns = {"zeroshot": ["top1", "top5", "balanced_accuracy", "top1_100"],
                       "retrieval": ["t2i_r@1", "i2t_r@1", "mean_recall"],
                       "clipscore": ["clipscore", "ref_clipscore", "pairwise_accuracy"],
                       "mvl_sib": ["accuracy"]}.get(task, [])
            split = task == "zeroshot" and "prompt_set" in rows
            for prompt_set, subset in (rows.groupby("prompt_set", sort=True) if split else [(None, rows)]):
                values = {c: round(float(subset[c].mean()), 6) for c in columns if c in subset and subset[c].notna().any()}
                values["n_languages"] = int(subset["lang"].nunique())
                entry[f"{task}/{dataset}" + (f"/{prompt_set}" if prompt_set is not None else "")] = values
        out[str(model)] = entry
    return out


# ---------------------------------------------------------------- plots

def _figure(width: float = 10, height: float = 4):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), dpi=100)


def _save(fig, path: str | Path) -> Path:
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        # No Software/creation-time metadata: the same data give the same bytes.
        fig.savefig(tmp, format="png", metadata={"Software": None}, bbox_inches="tight")
    plt.close(fig)
    return Path(path)


def plot_accuracy_by_language(zeroshot, languages, path: str | Path, metric: str = "top1") -> Path:
    """One line per model: `metric` per language, languages ordered by class count, with
    background bands for the resource groups of `languages` (lang, n_classes, group)."""
    info = languages.set_index("lang")
    langs = sorted(set(zeroshot["lang"]), key=lambda l: (info["n_classes"].get(l, 0), l))  # noqa: E741
    fig, ax = _figure(max(6, 0.25 * len(langs) + 2), 4)
    if "group" in info:
        groups = [info["group"].get(l) for l in langs]  # noqa: E741
        start = 0
        for i in range(1, len(langs) + 1):
            if i == len(langs) or groups[i] != groups[start]:
                ax.axvspan(start - 0.5, i - 0.5, color=GROUP_COLORS.get(groups[start], "#eeeeee"), zorder=0)
                ax.text((start + i - 1) / 2, 1.01, str(groups[start]), ha="center", va="bottom",
                        transform=ax.get_xaxis_transform(), fontsize=8)
                start = i
    position = {l: i for i, l in enumerate(langs)}  # noqa: E741
    # A fallback row answers a request for translated prompts: one line per model and
    # requested set, with the fallback languages drawn as hollow markers.
    fallback = zeroshot["prompt_set"].str.contains("fallback")
    requested = zeroshot["prompt_set"].str.replace(r"^(english|label)-fallback", "translated", regex=True)
    frame = zeroshot.assign(requested=requested, fallback=fallback)
    for (model, prompt_set), part in frame.groupby(["model", "requested"], sort=True):
        part = part.sort_values("lang", key=lambda s: s.map(position))
        x = part["lang"].map(position)
        (line,) = ax.plot(x, part[metric], marker="o", ms=3, lw=1, label=f"{model} ({prompt_set})")
        hollow = part["fallback"].to_numpy()
        if hollow.any():
            ax.plot(x[hollow], part[metric][hollow], ls="none", marker="o", ms=5, mfc="white", mec=line.get_color())
    if fallback.any():
        ax.plot([], [], ls="none", marker="o", mfc="white", mec="gray", label="fallback prompts (no translation)")
    ax.set_xticks(range(len(langs)))
    ax.set_xticklabels(langs, rotation=90, fontsize=7)
    ax.set_ylabel(metric)
    ax.set_xlabel("language (ordered by number of classes)")
    ax.set_xlim(-0.5, len(langs) - 0.5)
    ax.legend(fontsize=7, loc="upper left")
    return _save(fig, path)


def fit_line_with_band(x: Sequence[float], y: Sequence[float], grid: Sequence[float], confidence: float = 0.95):
    """Least-squares line and the confidence band of its mean at `grid` (t distribution)."""
    from scipy import stats

    x, y, grid = (np.asarray(v, dtype=float) for v in (x, y, grid))
    n = len(x)
    slope, intercept = np.polyfit(x, y, 1)
    fitted = intercept + slope * grid
    if n < 3:
        return fitted, fitted, fitted, float(slope), float(intercept)
    residual = y - (intercept + slope * x)
    s = np.sqrt((residual**2).sum() / (n - 2))
    sxx = ((x - x.mean()) ** 2).sum()
    half = stats.t.ppf(0.5 + confidence / 2, n - 2) * s * np.sqrt(1 / n + (grid - x.mean()) ** 2 / sxx)
    return fitted, fitted - half, fitted + half, float(slope), float(intercept)


def benchmark_vs_retrieval(zeroshot, retrieval, x_metric: str = "top1", y_metric: str = "mean_recall"):
    """(model, lang, dataset, x, y) for every model+language in both results."""
    left = zeroshot.groupby(["model", "lang"], as_index=False)[x_metric].mean()
    right = retrieval.groupby(["model", "lang", "dataset"], as_index=False)[y_metric].mean()
    return left.merge(right, on=["model", "lang"]).rename(columns={x_metric: "x", y_metric: "y"})


def plot_benchmark_vs_retrieval(pairs, path: str | Path, x_label: str, y_label: str) -> Path:
    fig, ax = _figure(6, 5)
    for dataset, part in pairs.groupby("dataset", sort=True):
        ax.scatter(part["x"], part["y"], s=14, label=str(dataset))
    if len(pairs) >= 2 and pairs["x"].nunique() > 1:
        grid = np.linspace(pairs["x"].min(), pairs["x"].max(), 50)
        fitted, low, high, slope, intercept = fit_line_with_band(pairs["x"], pairs["y"], grid)
        ax.plot(grid, fitted, color="black", lw=1, label=f"fit y = {slope:.2f} x + {intercept:.2f}")
        ax.fill_between(grid, low, high, color="gray", alpha=0.25, label="95% band")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.legend(fontsize=8)
    return _save(fig, path)


def per_language_correlation(pairs, min_models: int = 3):
    """lang x dataset Pearson r across models of (x, y); NaN with fewer than `min_models`."""
    import warnings

    import pandas as pd
    from scipy import stats

    records = []
    with warnings.catch_warnings():
        # Tiny random models give near-constant scores; the r is still reported as computed.
        warnings.simplefilter("ignore", stats.NearConstantInputWarning)
        for (lang, dataset), part in pairs.groupby(["lang", "dataset"], sort=True):
            ok = len(part) >= min_models and part["x"].nunique() > 1 and part["y"].nunique() > 1
            value = float(stats.pearsonr(part["x"], part["y"]).statistic) if ok else float("nan")
            records.append({"lang": lang, "dataset": dataset, "n_models": len(part), "pearson": value})
    return pd.DataFrame(records, columns=["lang", "dataset", "n_models", "pearson"])


def plot_correlation_heatmap(correlations, path: str | Path) -> Path:
    matrix = correlations.pivot(index="lang", columns="dataset", values="pearson")
    fig, ax = _figure(2 + 1.2 * max(1, matrix.shape[1]), 1 + 0.3 * max(1, matrix.shape[0]))
    image = ax.imshow(matrix.to_numpy(dtype=float), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_xticks(range(matrix.shape[1]))
    ax.set_xticklabels(matrix.columns, rotation=45, ha="right")
    ax.set_yticks(range(matrix.shape[0]))
    ax.set_yticklabels(matrix.index, fontsize=7)
    for (i, j), value in np.ndenumerate(matrix.to_numpy(dtype=float)):
        ax.text(j, i, "n/a" if np.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=6)
    fig.colorbar(image, ax=ax, label="Pearson r across models")
    return _save(fig, path)
