"""The report's plots, drawn in the paper style of `babelforge.eval.plots`:
- accuracy per language: one x position per language (its key as the tick label, thinned when
  there are too many to print side by side), ordered by class count, resource-group bands, the
  chance level (1 / classes, top-5: 5 / classes) as a step line, one colour per model and one
  marker per prompt set actually used (a fallback is named as such, never as a translation);
- benchmark vs retrieval scatter with a least-squares line and its 95 % band;
- a model x caption-set heatmap of the correlation across languages between zero-shot
  accuracy and retrieval recall.

Each `*_figure` function returns its matplotlib Figure (tests read its Axes); the `plot_*`
wrapper writes it as PNG, SVG and PDF. Models are shown by their display names
(`display_names`): a name from params, else the last part of the id, never a file path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from babelforge.babel_imagenet.resource_groups import resource_group
from babelforge.core.languages import ENGLISH
from babelforge.eval.plots import COLUMN_WIDTH, new_figure, paper, save_figure
from babelforge.eval.report.metric import fit_line_with_band

GROUP_ORDER = ("very-low", "low", "mid", "high")
GROUP_COLORS = {"very-low": "#fde0dd", "low": "#fff7bc", "mid": "#e5f5e0", "high": "#deebf7"}
# Prompt set actually used -> (marker, filled, legend text). The marker's shape is the kind of
# prompt (circle: templates translated into the language, square: the English CLIP templates,
# triangle: the bare label); hollow means a fallback: translated templates were asked for, the
# language has none. The class labels are always the evaluated language's own (Babel-ImageNet's).
PROMPT_MARKERS = {
    "translated": ("o", True, "translated templates"),
    "english": ("s", True, "English templates"),
    "english-fallback": ("s", False, "English templates (fallback: no translated templates)"),
    "label": ("^", True, "label only"),
    "label-fallback": ("^", False, "label only (fallback: no translated templates)"),
}
# The language of the English templates: its "english" rows are English templates with English labels.
# How many of the top-ranked classes count as a hit, per metric with a chance level over the
# language's own classes (top1_100's chance is that of its fixed control size, not in the rows).
CHANCE_HITS = {"top1": 1, "balanced_accuracy": 1, "top5": 5}
METRIC_LABELS = {
    "top1": "top-1 accuracy",
    "top5": "top-5 accuracy",
    "balanced_accuracy": "balanced accuracy",
    "top1_100": "top-1 accuracy (100-class control)",
}
CHANCE_STYLE = {"color": "0.25", "ls": "--", "lw": 0.8}
DATASET_MARKERS = ("o", "s", "^", "D", "v", "P")  # one per caption set in the benchmark-vs-retrieval plot


def _prompt_style(prompt_set: str) -> tuple[str, bool, str]:
    base, knowledge = (
        (prompt_set[: -len("+knowledge")], True) if prompt_set.endswith("+knowledge") else (prompt_set, False)
    )
    marker, filled, text = PROMPT_MARKERS.get(base, ("D", True, base))
    return marker, filled, text + (" + WordNet definition" if knowledge else "")


def _prompt_kind(prompt_set: str, kinds: list[str]) -> int:
    """The legend's order of prompt sets: that of PROMPT_MARKERS, unknown ones last."""
    base = prompt_set.removesuffix("+knowledge")
    return kinds.index(base) if base in kinds else len(kinds)


def _prompt_legend_text(prompt_set: str, langs: Iterable[str]) -> str:
    """The legend text of a prompt set as the plot's rows used it: English templates used only
    for English itself are English templates with English labels."""
    text = _prompt_style(prompt_set)[2]
    if prompt_set.split("+")[0] == "english" and set(langs) == {ENGLISH}:
        text = text.replace("English templates", "English templates, English labels", 1)
    return text


def chance_level(n_classes: float, metric: str = "top1") -> float:
    """Accuracy of guessing among a language's `n_classes` classes: min(k / classes, 1) for top-k
    (balanced accuracy: 1 / classes); NaN for a metric without one here."""
    hits = CHANCE_HITS.get(metric)
    if hits is None or not n_classes or not math.isfinite(float(n_classes)):
        return float("nan")
    return min(hits / float(n_classes), 1.0)


def _id_parts(model: str) -> list[str]:
    """A model id's `/` (or `\\`) separated parts: a path's folders, a Hub id's organisation and name."""
    return [part for part in re.split(r"[/\\]", str(model)) if part and part != "."] or [str(model)]


def display_names(models: Iterable[str], names: Mapping[str, str] | None = None) -> dict[str, str]:
    """Model id -> the name its plots show: `names[id]` (params eval.report.display_names), else
    the id's last part (a folder's name, a Hub id without its organisation); ids whose last parts
    collide keep as many parts as tell them apart."""
    names = dict(names or {})
    models = sorted({str(m) for m in models})
    shown = {}
    for model in models:
        if model in names:
            shown[model] = str(names[model])
            continue
        parts = _id_parts(model)
        depth = 1
        while depth < len(parts) and any(
            other != model and other not in names and _id_parts(other)[-depth:] == parts[-depth:] for other in models
        ):
            depth += 1
        shown[model] = "/".join(parts[-depth:])
    return shown


def _language_bands(ax, groups: list[str]) -> None:
    """Background bands of the resource groups over the languages (ordered by class count), each
    named on top where its name fits the band."""
    start = 0
    while start < len(groups):
        end = start
        while end + 1 < len(groups) and groups[end + 1] == groups[start]:
            end += 1
        name = groups[start]
        ax.axvspan(start - 0.5, end + 0.5, color=GROUP_COLORS.get(name, "#eeeeee"), zorder=0, lw=0)
        ax.text(
            (start + end) / 2,
            1.01,
            name,
            ha="center",
            va="bottom",
            transform=ax.get_xaxis_transform(),
            fontsize=6,
            gid=f"group-{name}",
        )
        start = end + 1


def _fit_band_names(fig, ax) -> None:
    """Hide a resource-group name that would overlap its neighbour's or stick out of the axes."""
    fig.canvas.draw()
    frame = ax.get_window_extent()
    shown = []
    for text in sorted(
        (t for t in ax.texts if (t.get_gid() or "").startswith("group-")), key=lambda t: t.get_position()[0]
    ):
        box = text.get_window_extent()
        outside = box.x0 < frame.x0 - 1 or box.x1 > frame.x1 + 1
        if outside or any(box.x0 < other.x1 + 2 and other.x0 < box.x1 + 2 for other in shown):
            text.set_visible(False)
        else:
            shown.append(box)


def _language_ticks(fig, ax, langs: list[str]) -> None:
    """Every language's key under its position: level when they fit, else upright, else every
    k-th (a minor tick marks the others) so no two labels overlap."""
    from matplotlib.ticker import FixedLocator, NullFormatter

    positions = list(range(len(langs)))
    ax.set_xticks(positions, labels=langs)
    fig.canvas.draw()
    slot = ax.get_window_extent().width / max(1, len(langs))
    widths = [label.get_window_extent().width for label in ax.get_xticklabels()]
    if max(widths, default=0) + 4 <= slot:
        return
    ax.tick_params(axis="x", labelrotation=90, labelsize=5.5)
    fig.canvas.draw()
    slot = ax.get_window_extent().width / max(1, len(langs))
    thickness = max((label.get_window_extent().width for label in ax.get_xticklabels()), default=0)
    step = max(1, math.ceil((thickness * 1.25) / slot))
    if step > 1:
        ax.set_xticks(positions[::step], labels=langs[::step])
        ax.xaxis.set_minor_locator(FixedLocator(positions))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.tick_params(axis="x", which="minor", length=1.5, width=0.4)


@paper
def accuracy_by_language_figure(zeroshot, languages=None, metric: str = "top1", names: Mapping[str, str] | None = None):
    """The Figure of `metric` per language: languages on x (fewest classes first, resource-group
    bands behind), the chance level of each language as a step line, colour = model, marker = the
    prompt set the row really used. `languages` (lang, n_classes: the built label table) orders
    and groups them; each row's own `n_classes` (the classes it was scored over) sets its chance."""
    import pandas as pd
    from matplotlib.lines import Line2D

    frame = zeroshot.copy()
    missing = pd.Series(np.nan, index=frame.index)
    scored = pd.to_numeric(frame["n_classes"], errors="coerce") if "n_classes" in frame else missing
    built = (
        pd.to_numeric(frame["lang"].map(languages.set_index("lang")["n_classes"]), errors="coerce")
        if languages is not None and "n_classes" in languages
        else missing
    )
    frame["n"] = built.fillna(scored)  # orders and groups the languages
    frame["scored"] = scored.fillna(frame["n"])  # the classes a row was scored over: its chance
    order = frame.groupby("lang")["n"].max().fillna(0).reset_index().sort_values(["n", "lang"], kind="stable")
    langs = [str(lang) for lang in order["lang"]]
    position = {lang: i for i, lang in enumerate(langs)}
    models = sorted(frame["model"].astype(str).unique())
    shown = display_names(models, names)
    colours = {model: f"C{i % 10}" for i, model in enumerate(models)}
    kinds = list(PROMPT_MARKERS)
    used_sets = sorted(frame["prompt_set"].unique(), key=lambda s: (_prompt_kind(s, kinds), s))
    texts = {s: _prompt_legend_text(s, frame.loc[frame["prompt_set"] == s, "lang"]) for s in used_sets}
    chance = [chance_level(n, metric) for n in frame.groupby("lang")["scored"].max().reindex(langs)]
    has_chance = any(math.isfinite(c) for c in chance)
    labels = [*shown.values(), *texts.values(), *(["chance"] if has_chance else [])]
    # Long entries take a row each; the figure grows with the legend so the axes keep their height.
    columns = 1 if max(len(label) for label in labels) > 24 else 2
    fig, ax = new_figure(COLUMN_WIDTH, 2.3 + 0.125 * math.ceil(len(labels) / columns))
    _language_bands(ax, [resource_group(n) for n in order["n"]])
    width = min(0.7, 0.25 * len(models)) if len(models) > 1 else 0.0
    for (model, prompt_set), part in frame.groupby(["model", "prompt_set"], sort=True):
        marker, filled, _ = _prompt_style(prompt_set)
        colour = colours[str(model)]
        # Models share every x (a language): dodge them a little so none hides another.
        offset = width * (models.index(str(model)) / max(1, len(models) - 1) - 0.5) if width else 0.0
        ax.scatter(
            part["lang"].map(position) + offset,
            part[metric],
            s=10,
            marker=marker,
            linewidths=0.6,
            edgecolors=colour,
            facecolors=colour if filled else "white",
            zorder=3,
        )
    handles = [Line2D([], [], ls="none", marker="o", ms=4, color=colours[m], label=shown[m]) for m in models]
    for prompt_set in used_sets:
        marker, filled, _ = _prompt_style(prompt_set)
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker=marker,
                ms=4,
                mec="0.3",
                mew=0.6,
                mfc="0.3" if filled else "white",
                label=texts[prompt_set],
            )
        )
    if has_chance:
        # One step per language, as wide as its slot: the chance level of its own class count.
        xs = [x for i in range(len(langs)) for x in (i - 0.5, i + 0.5)]
        ys = [c for c in chance for _ in (0, 1)]
        # drawn over the markers: a point at chance must not hide the line that says so
        (line,) = ax.plot(xs, ys, zorder=4, label="chance", **CHANCE_STYLE)
        handles.append(line)
    ax.set_xlim(-0.5, len(langs) - 0.5)
    values = frame[metric].astype(float)
    top = max([v for v in [*values, *chance] if math.isfinite(v)], default=0.0) * 1.1
    ax.set_ylim(0.0, top if top > 0 else 1.0)
    ax.set_xlabel("language (fewest classes with a label first)")
    ax.set_ylabel(METRIC_LABELS.get(metric, metric))
    fig.legend(
        handles=handles,
        loc="outside lower center",
        ncol=columns,
        frameon=False,
        handletextpad=0.3,
        columnspacing=1.0,
    )
    _language_ticks(fig, ax, langs)
    _fit_band_names(fig, ax)
    return fig


@paper
def plot_accuracy_by_language(
    zeroshot, languages, stem: str | Path, metric: str = "top1", names: Mapping[str, str] | None = None
) -> list[Path]:
    """`accuracy_by_language_figure` written as `<stem>.png/.svg/.pdf`."""
    return save_figure(accuracy_by_language_figure(zeroshot, languages, metric, names), stem)


@paper
def benchmark_vs_retrieval_figure(pairs, x_label: str, y_label: str, names: Mapping[str, str] | None = None):
    """Model x language points of a benchmark score against retrieval recall, colour = model, marker =
    caption set, with the least-squares line over all points and its 95 % band; both axes start at 0."""
    from matplotlib.lines import Line2D

    models = sorted(pairs["model"].astype(str).unique()) if "model" in pairs else [""]
    datasets = sorted(pairs["dataset"].astype(str).unique())
    shown = display_names(models, names) if "model" in pairs else {"": ""}
    colours = {model: f"C{i % 10}" for i, model in enumerate(models)}
    markers = {dataset: DATASET_MARKERS[i % len(DATASET_MARKERS)] for i, dataset in enumerate(datasets)}
    fig, ax = new_figure(COLUMN_WIDTH, 2.6 + 0.125 * math.ceil((len(models) + len(datasets)) / 2))
    for (model, dataset), part in pairs.assign(model=pairs.get("model", "")).groupby(["model", "dataset"], sort=True):
        ax.scatter(
            part["x"], part["y"], s=10, marker=markers[str(dataset)], linewidths=0, color=colours[str(model)], zorder=3
        )
    handles = [Line2D([], [], ls="none", marker="o", ms=4, color=colours[m], label=shown[m]) for m in models if m]
    handles += [
        Line2D([], [], ls="none", marker=markers[d], ms=4, color="0.3", label=f"{d} (model x language)")
        for d in datasets
    ]
    if len(pairs) >= 2 and pairs["x"].nunique() > 1:
        grid = np.linspace(pairs["x"].min(), pairs["x"].max(), 50)
        fitted, low, high, slope, intercept = fit_line_with_band(pairs["x"], pairs["y"], grid)
        (line,) = ax.plot(
            grid,
            fitted,
            color="black",
            lw=0.8,
            zorder=4,
            label=f"least squares, all points: y = {slope:.2f}x + {intercept:.2f}",
        )
        band = ax.fill_between(grid, low, high, color="gray", alpha=0.25, lw=0, label="95% band of the fit")
        handles += [line, band]
    for axis, column in ((ax.set_xlim, "x"), (ax.set_ylim, "y")):
        top = float(pairs[column].max()) * 1.1 if len(pairs) else 0.0
        axis(0.0, top if math.isfinite(top) and top > 0 else 1.0)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    fig.legend(handles=handles, loc="outside lower center", ncol=2, frameon=False, columnspacing=1.0)
    return fig


@paper
def plot_benchmark_vs_retrieval(
    pairs, stem: str | Path, x_label: str, y_label: str, names: Mapping[str, str] | None = None
) -> list[Path]:
    return save_figure(benchmark_vs_retrieval_figure(pairs, x_label, y_label, names), stem)


@paper
def correlation_heatmap_figure(correlations, min_languages: int = 3, names: Mapping[str, str] | None = None):
    """Models x caption sets: Pearson r across languages, the number of languages in each cell."""
    values = correlations.pivot(index="model", columns="dataset", values="pearson")
    counts = correlations.pivot(index="model", columns="dataset", values="n_languages")
    matrix = values.to_numpy(dtype=float)
    shown = display_names(values.index, names)
    fig, ax = new_figure(COLUMN_WIDTH, 0.9 + 0.32 * max(1, matrix.shape[0]))
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    ax.set_facecolor("0.92")
    ax.set_xticks(range(matrix.shape[1]))
    ax.set_xticklabels(values.columns)
    ax.set_yticks(range(matrix.shape[0]))
    ax.set_yticklabels([shown[str(model)] for model in values.index])
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
    return fig


@paper
def plot_correlation_heatmap(
    correlations, stem: str | Path, min_languages: int = 3, names: Mapping[str, str] | None = None
) -> list[Path]:
    return save_figure(correlation_heatmap_figure(correlations, min_languages, names), stem)
