"""The comparison's plot, in the paper style of `babelforge.eval.plots`: the paper's number (x) against
ours (y), one point per language (caption set, or correlation), one colour per paired model, the
line y = x; a stand-in pairing (`--as`) is named as such in the legend."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from babelforge.eval.plots import COLUMN_WIDTH, new_figure, paper, save_figure

AXIS_LABELS = {"top1": "zero-shot top-1 (%)", "t2i_r@1": "text-to-image R@1 (%)"}


def short_name(model: str) -> str:
    """A model id's last part (a folder's name, a Hub id without its organisation), never a whole path."""
    parts = [part for part in re.split(r"[/\\]", model) if part and part != "."]
    return parts[-1] if parts else model


@paper
def comparison_figure(comparison: Sequence[Mapping], metric: str, title: str | None = None):
    from matplotlib.lines import Line2D

    pairs = sorted({(r["model"], r["paper_model"], r["matched_by"]) for r in comparison})
    fig, ax = new_figure(COLUMN_WIDTH, 2.4 + 0.13 * len(pairs))
    handles = []
    for i, (model, short, how) in enumerate(pairs):
        part = [r for r in comparison if (r["model"], r["paper_model"], r["matched_by"]) == (model, short, how)]
        colour = f"C{i % 10}"
        ax.scatter([r["paper"] for r in part], [r["ours"] for r in part], s=8, color=colour, linewidths=0, zorder=3)
        label = f"{short_name(model)} vs paper {short}" + (" (stand-in, --as)" if how == "--as" else "")
        handles.append(Line2D([], [], ls="none", marker="o", ms=4, color=colour, label=label))
    values = [v for r in comparison for v in (r["ours"], r["paper"])]
    top = max([100.0 if max(values, default=0) > 1 else 1.0, *values])
    low = min([0.0, *values])
    (line,) = ax.plot([low, top], [low, top], color="0.4", ls="--", lw=0.8, label="ours = paper")
    handles.append(line)
    ax.set_xlim(low, top)
    ax.set_ylim(low, top)
    name = AXIS_LABELS.get(metric, f"{metric} (x 100)")
    ax.set_xlabel(f"paper: {name}")
    ax.set_ylabel(f"ours: {name}")
    if title:
        ax.set_title(title)
    fig.legend(handles=handles, loc="outside lower center", ncol=1, frameon=False)
    return fig


@paper
def plot_comparison(
    comparison: Sequence[Mapping], metric: str, stem: str | Path, title: str | None = None
) -> list[Path]:
    """`comparison_figure` written as `<stem>.png`, `.svg` and `.pdf`."""
    return save_figure(comparison_figure(comparison, metric, title), stem)
