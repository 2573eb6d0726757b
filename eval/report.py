"""Result rows -> run JSON, one merged CSV, DVC metrics and plots.

Every row carries `ROW_KEYS`: model id, revision, dataset, dataset version (the DVC
hash of the input artifact from dvc.lock when it is a tracked output, else the sha256
of its content), language, prompt set and seed. A run JSON holds the rows of one task
plus the provenance record; `merge_rows` flattens every run into one table.

Plots (matplotlib, Agg backend) are sized for one column of a two-column paper
(`COLUMN_WIDTH` inches, 7-8 pt text) and written as PNG at `PRINT_DPI` plus SVG and PDF,
with fixed metadata so reruns are byte-stable:
- accuracy per language against its class count (log scale), resource-group bands, one
  colour per model and one marker per prompt set actually used (fallback prompts are
  named as such, never as translations);
- benchmark vs retrieval scatter with a least-squares line and its 95 % band;
- a model x caption-set heatmap of the correlation across languages between zero-shot
  accuracy and retrieval recall.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import yaml

from babelforge.babel_imagenet.labels import GROUP_BOUNDS
from babelforge.core.determinism import METRIC_DECIMALS, rounded
from babelforge.core.io import atomic_path, sha256_file
from babelforge.eval.models import directory_hash

ROW_KEYS = ("model", "revision", "dataset", "dataset_version", "lang", "prompt_set", "seed")
GROUP_ORDER = ("very-low", "low", "mid", "high")
GROUP_COLORS = {"very-low": "#fde0dd", "low": "#fff7bc", "mid": "#e5f5e0", "high": "#deebf7"}
# Columns too wide or nested for the merged CSV (kept in the run JSON).
JSON_ONLY = ("per_class",)


def _dvc_lock_outs(lock_path: Path) -> dict[str, str]:

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
        return "sha256:" + directory_hash(path)
    if path.is_file():
        return "sha256:" + sha256_file(path)
    return "absent"


def run_document(task: str, rows: Sequence[Mapping], provenance: Mapping) -> dict:
    missing = [key for row in rows for key in ROW_KEYS if key not in row]
    if missing:
        raise ValueError(f"result rows lack {sorted(set(missing))}")
    # Rounded to the stated precision: CPU kernel noise below it cannot change the file.
    rows = [rounded(json_safe(dict(row)), METRIC_DECIMALS) for row in rows]
    return {"task": task, "provenance": dict(provenance), "rows": rows}


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


# ---------------------------------------------------------------- plots

COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper
PRINT_DPI = 300
FIGURE_FORMATS = ("png", "svg", "pdf")
# Prompt set actually used -> (marker, filled, legend text). A fallback row answers a
# request for translated prompts with English templates or the bare label: it is named
# for what it is.
PROMPT_MARKERS = {
    "translated": ("o", True, "translated prompts"),
    "english": ("s", True, "English templates"),
    "english-fallback": ("o", False, "English templates (no translation)"),
    "label": ("^", True, "label only"),
    "label-fallback": ("^", False, "label only (no translation)"),
}


def _style():
    """Paper-sized text: 7-8 pt at column width."""
    return {
        "font.size": 7,
        "axes.titlesize": 8,
        "axes.labelsize": 7,
        "xtick.labelsize": 6.5,
        "ytick.labelsize": 6.5,
        "legend.fontsize": 6.5,
        "lines.linewidth": 1.0,
        "axes.linewidth": 0.6,
        "svg.hashsalt": "babelforge",
        "svg.fonttype": "none",
        "pdf.fonttype": 42,
    }


def _paper(plot):
    """Run a plot function with the paper style (rcParams apply to artists as they are made)."""

    @functools.wraps(plot)
    def wrapper(*args, **kwargs):
        import matplotlib

        matplotlib.use("Agg")
        with matplotlib.rc_context(_style()):
            return plot(*args, **kwargs)

    return wrapper


def _figure(width: float = COLUMN_WIDTH, height: float = 2.4):
    import matplotlib.pyplot as plt

    # Constrained layout fits labels and legends inside the given size: the figure stays column-wide.
    return plt.subplots(figsize=(width, height), layout="constrained")


def figure_paths(stem: str | Path) -> list[Path]:
    """The files one plot is written to: `<stem>.png`, `.svg`, `.pdf`."""
    return [Path(f"{stem}.{fmt}") for fmt in FIGURE_FORMATS]


def _save(fig, stem: str | Path) -> list[Path]:
    """PNG at print resolution, SVG and PDF, each without creation dates or tool versions."""
    import matplotlib.pyplot as plt

    metadata = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Creator": None, "Producer": None},
    }
    written = []
    for path in figure_paths(stem):
        fmt = path.suffix[1:]
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=PRINT_DPI, metadata=metadata[fmt])
        written.append(path)
    plt.close(fig)
    return written


def _prompt_style(prompt_set: str) -> tuple[str, bool, str]:
    base, knowledge = (
        (prompt_set[: -len("+knowledge")], True) if prompt_set.endswith("+knowledge") else (prompt_set, False)
    )
    marker, filled, text = PROMPT_MARKERS.get(base, ("D", True, base))
    return marker, filled, text + (" + WordNet definition" if knowledge else "")


def _group_bands(ax, low: float, high: float) -> None:
    """Background bands of the resource groups on a class-count x axis, named on top."""

    start = 0
    for name, upper in GROUP_BOUNDS:
        left, right = max(start, low), min(upper, high)
        if left < right:
            ax.axvspan(left, right, color=GROUP_COLORS.get(name, "#eeeeee"), zorder=0, lw=0)
            middle = (left * right) ** 0.5  # the middle on a log axis
            ax.text(middle, 1.01, name, ha="center", va="bottom", transform=ax.get_xaxis_transform(), fontsize=6)
        start = upper


@_paper
def plot_accuracy_by_language(zeroshot, languages, stem: str | Path, metric: str = "top1") -> list[Path]:
    """`metric` of every language against its class count (log scale), resource-group bands
    behind; colour = model, marker = the prompt set the row really used."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    counts = languages.set_index("lang")["n_classes"]
    frame = zeroshot.assign(n=zeroshot["lang"].map(counts).fillna(zeroshot["n_classes"]).astype(float))
    fig, ax = _figure(COLUMN_WIDTH, 2.6)
    low, high = frame["n"].min() / 1.15, frame["n"].max() * 1.15
    ax.set_xscale("log")
    _group_bands(ax, low, high)
    models = sorted(frame["model"].unique())
    colours = {model: f"C{i % 10}" for i, model in enumerate(models)}
    used_sets = sorted(frame["prompt_set"].unique())
    for (model, prompt_set), part in frame.groupby(["model", "prompt_set"], sort=True):
        marker, filled, _ = _prompt_style(prompt_set)
        colour = colours[model]
        # Models share every x (a language's class count): dodge them a little so none hides another.
        dodge = 1.0 + 0.025 * (models.index(model) - (len(models) - 1) / 2)
        ax.scatter(
            part["n"] * dodge,
            part[metric],
            s=9,
            marker=marker,
            linewidths=0.6,
            edgecolors=colour,
            facecolors=colour if filled else "white",
            zorder=3,
        )
    ax.set_xlim(low, high)
    ticks = [t for t in (1, 3, 10, 30, 100, 300, 1000) if low <= t <= high]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("classes with a label in the language (log scale)")
    ax.set_ylabel({"top1": "top-1 accuracy"}.get(metric, metric))
    handles = [Line2D([], [], ls="none", marker="o", ms=4, color=colours[m], label=m) for m in models]
    for prompt_set in used_sets:
        marker, filled, text = _prompt_style(prompt_set)
        handles.append(
            Line2D(
                [], [], ls="none", marker=marker, ms=4, mec="0.3", mew=0.6, mfc="0.3" if filled else "white", label=text
            )
        )
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False, handletextpad=0.3, columnspacing=1.0)
    return _save(fig, stem)


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


@_paper
def plot_benchmark_vs_retrieval(pairs, stem: str | Path, x_label: str, y_label: str) -> list[Path]:
    fig, ax = _figure(COLUMN_WIDTH, 2.6)
    for dataset, part in pairs.groupby("dataset", sort=True):
        ax.scatter(part["x"], part["y"], s=9, linewidths=0, label=f"{dataset} (model x language)")
    if len(pairs) >= 2 and pairs["x"].nunique() > 1:
        grid = np.linspace(pairs["x"].min(), pairs["x"].max(), 50)
        fitted, low, high, slope, intercept = fit_line_with_band(pairs["x"], pairs["y"], grid)
        ax.plot(
            grid, fitted, color="black", lw=0.8, label=f"least squares, all points: y = {slope:.2f}x + {intercept:.2f}"
        )
        ax.fill_between(grid, low, high, color="gray", alpha=0.25, lw=0, label="95% band of the fit")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    fig.legend(loc="outside lower center", ncol=1, frameon=False)
    return _save(fig, stem)


def per_model_correlation(pairs, min_languages: int = 3):
    """Per model and caption set: Pearson r and Spearman rho across languages of (x, y).

    NaN where fewer than `min_languages` languages are shared or a side is constant.
    """

    import pandas as pd
    from scipy import stats

    records = []
    with warnings.catch_warnings():
        # Tiny random models give near-constant scores; the r is still reported as computed.
        warnings.simplefilter("ignore", stats.NearConstantInputWarning)
        for (model, dataset), part in pairs.groupby(["model", "dataset"], sort=True):
            ok = len(part) >= min_languages and part["x"].nunique() > 1 and part["y"].nunique() > 1
            pearson = float(stats.pearsonr(part["x"], part["y"]).statistic) if ok else float("nan")
            spearman = float(stats.spearmanr(part["x"], part["y"]).statistic) if ok else float("nan")
            records.append(
                {"model": model, "dataset": dataset, "n_languages": len(part), "pearson": pearson, "spearman": spearman}
            )
    return pd.DataFrame(records, columns=["model", "dataset", "n_languages", "pearson", "spearman"])


@_paper
def plot_correlation_heatmap(correlations, stem: str | Path, min_languages: int = 3) -> list[Path]:
    """Models x caption sets: Pearson r across languages, the number of languages in each cell."""
    values = correlations.pivot(index="model", columns="dataset", values="pearson")
    counts = correlations.pivot(index="model", columns="dataset", values="n_languages")
    matrix = values.to_numpy(dtype=float)
    fig, ax = _figure(COLUMN_WIDTH, 0.9 + 0.32 * max(1, matrix.shape[0]))
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_facecolor("0.92")
    ax.set_xticks(range(matrix.shape[1]))
    ax.set_xticklabels(values.columns)
    ax.set_yticks(range(matrix.shape[0]))
    ax.set_yticklabels(values.index)
    undefined = False
    for (i, j), value in np.ndenumerate(matrix):
        n = counts.iloc[i, j]
        if np.isnan(n):
            continue  # the model was not evaluated on this caption set: no cell
        undefined |= bool(np.isnan(value))
        text = "–" if np.isnan(value) else f"{value:+.2f}"
        ax.text(
            j,
            i,
            f"{text}\nn={int(n)}",
            ha="center",
            va="center",
            fontsize=6,
            color="white" if not np.isnan(value) and abs(value) > 0.6 else "black",
        )
    ax.set_xlabel("caption set (retrieval mean recall)")
    colorbar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
    colorbar.set_label("Pearson r across languages", fontsize=6.5)
    colorbar.ax.tick_params(labelsize=6)
    title = "zero-shot top-1 vs retrieval"
    if undefined:
        title += f"\n– : fewer than {min_languages} languages or constant scores"
    ax.set_title(title, fontsize=7)
    return _save(fig, stem)
