"""Correlation coefficients with n, p-value and a seeded bootstrap 95 % CI.

Pearson r, Spearman rho, Kendall tau-b and Kendall tau-c. tau-c (Stuart's tau-c) is
computed here from the concordance statistic S = n_concordant - n_discordant:

    tau_c = 2 S / (n^2 (m - 1) / m)

where m is the size of the rating scale. scipy's `kendalltau(variant='c')` takes m as
the smaller number of *distinct observed values* of x and y; a human rating scale can
have levels nobody used, so m is a parameter here (default: scipy's choice). The
p-value of tau-c is the one of S under independence, the same as for tau-b: the two
statistics differ only in how S is scaled.

`mirror=True` appends every pair again with both values negated: for side-by-side
comparisons whose pair order is arbitrary (A vs B is B vs A with the sign flipped),
as in XM3600's human-vs-CIDEr analysis. The coefficient is computed on the mirrored
pairs, but the mirror images are no new observations: `n` stays the number of real
pairs and the p-value tests the coefficient at that n (t test for Pearson / Spearman,
the normal approximation of S for Kendall). The p-value scipy gives for the doubled
sample, far too small, is reported only on request (`doubled_p=True`) and labelled so.
The bootstrap resamples the original pairs and mirrors each resample, so a pair and
its mirror image stay together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from babelforge.core.errors import BabelforgeError

METHODS = ("pearson", "spearman", "kendall_b", "kendall_c")


@dataclass(frozen=True)
class Correlation:
    method: str
    value: float
    n: int
    p_value: float
    ci_low: float
    ci_high: float
    scale_m: int | None = None  # tau-c only
    mirrored: bool = False  # value computed on the pairs plus their negated mirror images
    p_value_doubled: float | None = None  # mirrored only, on request: scipy's p-value at 2n (anti-conservative)

    def as_dict(self) -> dict:
        return asdict(self)


def mirrored(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Every pair once as given and once with both values negated."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    return np.concatenate([x, -x]), np.concatenate([y, -y])


def _pairs_from(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def _statistic_from_tau_b(tau_b: float, x: np.ndarray, y: np.ndarray) -> int:
    n0 = len(x) * (len(x) - 1) // 2
    untied_x, untied_y = n0 - _pairs_from(x), n0 - _pairs_from(y)
    if untied_x == 0 or untied_y == 0:
        return 0
    return int(round(tau_b * np.sqrt(float(untied_x) * float(untied_y))))


def concordance_statistic(x: Sequence[float], y: Sequence[float]) -> int:
    """S = concordant - discordant pairs (pairs tied in x or y count for neither).

    O(n log n) through scipy's tau-b: tau_b = S / sqrt((n0 - t_x)(n0 - t_y)), with
    n0 = n(n-1)/2 and t_x, t_y the pairs tied in x and in y. S is an integer, so the
    product is rounded back to one.
    """
    from scipy.stats import kendalltau

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(x) < 2:
        return 0
    tau_b = kendalltau(x, y, variant="b").statistic
    return 0 if np.isnan(tau_b) else _statistic_from_tau_b(tau_b, x, y)


def _tau_c_from_statistic(s: int, n: int, m: int) -> float:
    return 2.0 * s / (n * n * (m - 1) / m) if m >= 2 and n >= 2 else float("nan")


def kendall_tau_c(x: Sequence[float], y: Sequence[float], m: int | None = None) -> float:
    """Stuart's tau-c with scale size m (default: fewer distinct values of x and y)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    m = default_scale(x, y) if m is None else m
    return _tau_c_from_statistic(concordance_statistic(x, y), len(x), m)


def default_scale(x: np.ndarray, y: np.ndarray) -> int:
    return int(min(len(np.unique(x)), len(np.unique(y))))


def _coefficient(method: str, x: np.ndarray, y: np.ndarray, m: int | None) -> tuple[float, float]:
    """(value, p-value) of one method; NaN when undefined (constant input, n < 3)."""
    from scipy import stats

    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan"), float("nan")
    if method == "pearson":
        result = stats.pearsonr(x, y)
        return float(result.statistic), float(result.pvalue)
    if method == "spearman":
        result = stats.spearmanr(x, y)
        return float(result.statistic), float(result.pvalue)
    if method in ("kendall_b", "kendall_c"):
        result = stats.kendalltau(x, y, variant="b")
        if method == "kendall_b":
            return float(result.statistic), float(result.pvalue)
        m = default_scale(x, y) if m is None else m
        s = _statistic_from_tau_b(float(result.statistic), x, y)
        return _tau_c_from_statistic(s, len(x), m), float(result.pvalue)
    raise ValueError(f"unknown correlation method {method!r}; known: {', '.join(METHODS)}")


def p_value_at(method: str, value: float, n: int) -> float:
    """Two-sided p-value of a coefficient `value` observed on `n` independent pairs.

    Pearson and Spearman: t = r sqrt((n - 2) / (1 - r^2)) with n - 2 degrees of freedom
    (scipy's test for both). Kendall (tau-b value; tau-c shares the test of S): the normal
    approximation z = 3 tau sqrt(n (n - 1)) / sqrt(2 (2n + 5)).
    """
    from scipy import stats

    if n < 3 or np.isnan(value):
        return float("nan")
    if method in ("pearson", "spearman"):
        if abs(value) >= 1.0:
            return 0.0
        t = value * np.sqrt((n - 2) / (1.0 - value * value))
        return float(2.0 * stats.t.sf(abs(t), n - 2))
    if method in ("kendall_b", "kendall_c"):
        z = 3.0 * value * np.sqrt(n * (n - 1)) / np.sqrt(2.0 * (2 * n + 5))
        return float(2.0 * stats.norm.sf(abs(z)))
    raise ValueError(f"unknown correlation method {method!r}; known: {', '.join(METHODS)}")


def correlate(
    x: Sequence[float],
    y: Sequence[float],
    methods: Sequence[str] = METHODS,
    scale_m: int | None = None,
    mirror: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    doubled_p: bool = False,
) -> dict[str, Correlation]:
    """Every method on the paired values, each with n, p-value and a bootstrap CI.

    The CI is the percentile interval over `n_boot` resamples of the pairs drawn with
    `numpy.random.default_rng(seed)`; resamples where a coefficient is undefined are
    left out of its interval. With `mirror`, n and the p-value are those of the real
    pairs; `doubled_p` adds scipy's p-value of the doubled sample, labelled as such.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-d and of equal length (got {x.shape} and {y.shape})")
    if scale_m is not None and scale_m < 2:
        raise ValueError(f"tau-c scale size m must be at least 2 (got {scale_m})")
    full_x, full_y = mirrored(x, y) if mirror else (x, y)
    if "kendall_c" in methods and scale_m is None and len(full_x):
        # Fix m from the full data so every bootstrap resample uses the same scale.
        scale_m = default_scale(full_x, full_y)

    rng = np.random.default_rng(seed)
    samples = [rng.integers(0, len(x), len(x)) for _ in range(n_boot)] if len(x) else []
    tail = (1.0 - confidence) / 2.0
    results = {}
    for method in methods:
        value, p_scipy = _coefficient(method, full_x, full_y, scale_m)
        p_value = p_scipy  # of the data as given; a mirrored sample is tested at its real n below
        if mirror:
            tested = _coefficient("kendall_b", full_x, full_y, None)[0] if method == "kendall_c" else value
            p_value = p_value_at(method, tested, len(x))
        boot = []
        for index in samples:
            bx, by = mirrored(x[index], y[index]) if mirror else (x[index], y[index])
            boot.append(_coefficient(method, bx, by, scale_m)[0])
        boot = np.asarray(boot, dtype=float)
        boot = boot[~np.isnan(boot)]
        low, high = np.quantile(boot, [tail, 1.0 - tail]) if len(boot) else (np.nan, np.nan)
        results[method] = Correlation(
            method=method,
            value=value,
            n=len(x),
            p_value=p_value,
            ci_low=float(low),
            ci_high=float(high),
            scale_m=scale_m if method == "kendall_c" else None,
            mirrored=mirror,
            p_value_doubled=p_scipy if mirror and doubled_p else None,
        )
    return results


DOUBLED_P_LABEL = "p (2n, mirrored)"


def format_table(results: dict[str, Correlation]) -> str:
    """A fixed-width table a person reads in a terminal; a mirrored run says how n and p were taken."""
    doubled = any(r.p_value_doubled is not None for r in results.values())
    header = f"{'method':<16} {'value':>8} {'p-value':>10} {'95% CI':>19} {'n':>7}"
    lines = [header + (f" {DOUBLED_P_LABEL:>17}" if doubled else "")]
    for result in results.values():
        name = result.method + (f" (m={result.scale_m})" if result.scale_m else "")
        ci = f"[{result.ci_low:+.3f}, {result.ci_high:+.3f}]"
        line = f"{name:<16} {result.value:>+8.4f} {result.p_value:>10.3g} {ci:>19} {result.n:>7}"
        if doubled:
            line += f" {result.p_value_doubled:>17.3g}"
        lines.append(line)
    if any(r.mirrored for r in results.values()):
        lines.append(
            "mirrored: values on the pairs and their negated copies; n and p-value are those of the real pairs"
        )
        if doubled:
            lines.append(
                f"{DOUBLED_P_LABEL}: scipy's p-value treating the mirror copies as new pairs "
                "(anti-conservative; for comparison only)"
            )
    return "\n".join(lines)


@dataclass(frozen=True)
class JoinReport:
    """How two tables met on their keys: what was kept and what each side lost."""

    keys: tuple[str, ...]
    n_left: int
    n_right: int
    n_joined: int
    dropped_left: list  # key tuples of left rows with no partner on the right
    dropped_right: list

    def describe(self, left_name: str = "X", right_name: str = "Y", show: int = 5) -> str:
        def sample(keys: list) -> str:
            shown = ", ".join("/".join(map(str, key)) for key in keys[:show])
            return f" ({shown}{', ...' if len(keys) > show else ''})" if keys else ""

        return (
            f"joined {self.n_joined} rows on {','.join(self.keys)}: "
            f"{left_name} {self.n_left} rows, dropped {len(self.dropped_left)}{sample(self.dropped_left)}; "
            f"{right_name} {self.n_right} rows, dropped {len(self.dropped_right)}{sample(self.dropped_right)}"
        )


def join_columns(left, right, x: str, y: str, keys: Sequence[str]):
    """Inner-join column `x` of `left` with column `y` of `right` on `keys`.

    Returns (DataFrame with columns keys + ["x", "y"], JoinReport). Duplicate keys on
    either side are an error: a many-to-many join would silently weight some pairs.
    """

    keys = list(keys)
    for name, table, column in (("X", left, x), ("Y", right, y)):
        missing = [c for c in [*keys, column] if c not in table.columns]
        if missing:
            raise BabelforgeError(
                f"table {name} has no column(s) {', '.join(missing)} (it has: {', '.join(map(str, table.columns))})"
            )
        duplicated = table[keys].duplicated()
        if duplicated.any():
            first = tuple(table.loc[duplicated.idxmax(), keys])
            raise BabelforgeError(
                f"table {name}: key {'/'.join(map(str, first))} occurs more than once in {','.join(keys)}; "
                "make the keys unique or add key columns with --on"
            )
    left_part = left[[*keys, x]].rename(columns={x: "x"})
    right_part = right[[*keys, y]].rename(columns={y: "y"})
    merged = left_part.merge(right_part, on=keys, how="outer", indicator=True, sort=True)
    key_tuples = lambda frame: [tuple(row) for row in frame[keys].itertuples(index=False)]  # noqa: E731
    report = JoinReport(
        keys=tuple(keys),
        n_left=len(left),
        n_right=len(right),
        n_joined=int((merged["_merge"] == "both").sum()),
        dropped_left=key_tuples(merged[merged["_merge"] == "left_only"]),
        dropped_right=key_tuples(merged[merged["_merge"] == "right_only"]),
    )
    joined = merged[merged["_merge"] == "both"].drop(columns="_merge").reset_index(drop=True)
    return joined, report
