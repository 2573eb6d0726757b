"""Paper figures: the style, size and byte-stable files every eval plot shares.

Plots (matplotlib, Agg backend) are sized for one column of a two-column paper
(`COLUMN_WIDTH` inches, 7-8 pt text) and written as PDF and SVG (vector: print and pages) plus a
PNG at `SCREEN_DPI` (about 500 px wide: two revisions side by side in `dvc plots diff` fit a
screen), with fixed metadata so reruns are byte-stable. A plot function decorated with `paper`
draws with the style; `new_figure` and `save_figure` make and write its figure.
"""

from __future__ import annotations

import functools
from pathlib import Path

from babelforge.core.io import atomic_path

COLUMN_WIDTH = 3.4  # inches: one column of a two-column paper
SCREEN_DPI = 150  # the PNG's: a column-wide figure is 510 px (the PDF and SVG are vector)
FIGURE_FORMATS = ("png", "svg", "pdf")


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


def paper(plot):
    """Run a plot function with the paper style (rcParams apply to artists as they are made)."""

    @functools.wraps(plot)
    def wrapper(*args, **kwargs):
        import matplotlib

        matplotlib.use("Agg")
        with matplotlib.rc_context(_style()):
            return plot(*args, **kwargs)

    return wrapper


def new_figure(width: float = COLUMN_WIDTH, height: float = 2.4):
    import matplotlib.pyplot as plt

    # Constrained layout fits labels and legends inside the given size: the figure stays column-wide.
    return plt.subplots(figsize=(width, height), layout="constrained")


def figure_paths(stem: str | Path) -> list[Path]:
    """The files one plot is written to: `<stem>.png`, `.svg`, `.pdf`."""
    return [Path(f"{stem}.{fmt}") for fmt in FIGURE_FORMATS]


def save_figure(fig, stem: str | Path) -> list[Path]:
    """PNG at screen resolution, SVG and PDF, each without creation dates or tool versions."""
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
            fig.savefig(tmp, format=fmt, dpi=SCREEN_DPI, metadata=metadata[fmt])
        written.append(path)
    plt.close(fig)
    return written
