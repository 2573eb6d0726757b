"""The numbers behind the report's comparison plots: zero-shot vs retrieval pairs per model and
language, the least-squares line with its confidence band, and the correlation across languages."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np


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
