"""The report's plots, drawn in the paper style of `babelforge.eval.plots`:
- accuracy per language against its class count (log scale), resource-group bands, one
  colour per model and one marker per prompt set actually used (fallback prompts are
  named as such, never as translations);
- benchmark vs retrieval scatter with a least-squares line and its 95 % band;
- a model x caption-set heatmap of the correlation across languages between zero-shot
  accuracy and retrieval recall.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from babelforge.babel_imagenet.labels import GROUP_BOUNDS
from babelforge.eval.plots import COLUMN_WIDTH, new_figure, paper, save_figure
from babelforge.eval.report.metric import fit_line_with_band

GROUP_ORDER = ("very-low", "low", "mid", "high")
GROUP_COLORS = {"very-low": "#fde0dd", "low": "#fff7bc", "mid": "#e5f5e0", "high": "#deebf7"}
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


@paper
def plot_accuracy_by_language(zeroshot, languages, stem: str | Path, metric: str = "top1") -> list[Path]:
    """`metric` of every language against its class count (log scale), resource-group bands
    behind; colour = model, marker = the prompt set the row really used."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    counts = languages.set_index("lang")["n_classes"]
    frame = zeroshot.assign(n=zeroshot["lang"].map(counts).fillna(zeroshot["n_classes"]).astype(float))
    fig, ax = new_figure(COLUMN_WIDTH, 2.6)
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
    return save_figure(fig, stem)


@paper
def plot_benchmark_vs_retrieval(pairs, stem: str | Path, x_label: str, y_label: str) -> list[Path]:
    fig, ax = new_figure(COLUMN_WIDTH, 2.6)
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
    return save_figure(fig, stem)


@paper
def plot_correlation_heatmap(correlations, stem: str | Path, min_languages: int = 3) -> list[Path]:
    """Models x caption sets: Pearson r across languages, the number of languages in each cell."""
    values = correlations.pivot(index="model", columns="dataset", values="pearson")
    counts = correlations.pivot(index="model", columns="dataset", values="n_languages")
    matrix = values.to_numpy(dtype=float)
    fig, ax = new_figure(COLUMN_WIDTH, 0.9 + 0.32 * max(1, matrix.shape[0]))
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
    return save_figure(fig, stem)
