"""Correlation coefficients against values worked out by hand (see the comments)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from babelforge.core.errors import BabelforgeError
from babelforge.eval.tools.correlation import concordance_statistic, correlate, join_columns, kendall_tau_c, mirrored

# x = 1..5, y = 2,1,4,3,5: deviations (-2,-1,0,1,2) and (-1,-2,1,0,2), sum of products 8,
# sums of squares 10 and 10 -> r = 0.8; the ranks are the values -> rho = 0.8.
# Of the 10 pairs only (1,2) and (3,4) are discordant: S = 8 - 2 = 6, tau-b = 6/10.
X = [1, 2, 3, 4, 5]
Y = [2, 1, 4, 3, 5]

# With ties: x = 1,1,2,2,3 and y = 1,2,1,3,3. Pairs (0,1),(2,3) tie in x; (0,2),(3,4) tie
# in y; (1,2) is discordant; (0,3),(0,4),(1,3),(1,4),(2,4) are concordant: S = 5 - 1 = 4.
# tau-b = 4 / sqrt((10-2)(10-2)) = 0.5; tau-c with m = 3 = 2*4 / (25 * 2/3) = 0.48,
# with m = 5 (a 5-point scale) = 8 / (25 * 4/5) = 0.4.
XT = [1, 1, 2, 2, 3]
YT = [1, 2, 1, 3, 3]


def test_hand_computed_without_ties():
    result = correlate(X, Y, n_boot=50)
    assert result["pearson"].value == pytest.approx(0.8)
    assert result["spearman"].value == pytest.approx(0.8)
    assert result["kendall_b"].value == pytest.approx(0.6)
    # no ties, m = 5 distinct values: 2*6 / (25 * 4/5) = 0.6 as well
    assert result["kendall_c"].value == pytest.approx(0.6)
    assert result["kendall_c"].scale_m == 5
    assert all(r.n == 5 for r in result.values())


def test_tau_b_and_tau_c_differ_under_ties_and_scale():
    assert concordance_statistic(XT, YT) == 4
    result = correlate(XT, YT, n_boot=20)
    assert result["kendall_b"].value == pytest.approx(0.5)
    assert result["kendall_c"].value == pytest.approx(0.48)
    assert kendall_tau_c(XT, YT, m=5) == pytest.approx(0.4)
    assert correlate(XT, YT, scale_m=5, n_boot=20)["kendall_c"].value == pytest.approx(0.4)


def test_tau_c_matches_scipy_when_m_is_scipys_choice():
    rng = np.random.default_rng(3)
    x, y = rng.integers(1, 5, 60), rng.integers(1, 4, 60)
    assert kendall_tau_c(x, y) == pytest.approx(stats.kendalltau(x, y, variant="c").statistic)


def test_concordance_statistic_equals_brute_force_count():
    rng = np.random.default_rng(7)
    x, y = rng.integers(0, 4, 40), rng.integers(0, 6, 40)
    brute = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(40) for j in range(i + 1, 40))
    assert concordance_statistic(x, y) == brute


def test_mirror_centres_the_data_and_keeps_the_real_n():
    # mirrored x = 1,2,3,-1,-2,-3 and y = 1,3,2,-1,-3,-2: both means 0, so
    # r = sum(xy) / sqrt(sum(x^2) sum(y^2)) = 2*(1+6+6) / (2*14) = 26/28.
    mx, my = mirrored([1, 2, 3], [1, 3, 2])
    assert list(mx) == [1, 2, 3, -1, -2, -3]
    result = correlate([1, 2, 3], [1, 3, 2], mirror=True, n_boot=20)
    assert result["pearson"].n == 3  # the mirror images are no new observations
    assert result["pearson"].value == pytest.approx(26 / 28)
    # unmirrored: deviations (-1,0,1) and (-1,1,0) -> r = 1/2
    assert correlate([1, 2, 3], [1, 3, 2], n_boot=20)["pearson"].value == pytest.approx(0.5)


@pytest.mark.slow
def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = x + rng.normal(scale=0.5, size=200)
    first = correlate(x, y, n_boot=200, seed=1)
    again = correlate(x, y, n_boot=200, seed=1)
    other = correlate(x, y, n_boot=200, seed=2)
    for method, result in first.items():
        assert result == again[method]
        assert result.ci_low < result.value < result.ci_high
        assert 0 < result.p_value < 1e-10
    assert first["pearson"].ci_low != other["pearson"].ci_low


def test_constant_input_gives_nan_not_a_crash():
    result = correlate([1, 1, 1, 1], [1, 2, 3, 4], n_boot=10)
    assert math.isnan(result["pearson"].value) and math.isnan(result["kendall_c"].value)


def test_join_reports_what_each_side_lost():
    left = pd.DataFrame({"img": ["a", "b", "c", "c"], "sys": [1, 1, 1, 2], "human": [0.1, 0.2, 0.3, 0.4]})
    right = pd.DataFrame({"img": ["b", "c", "d"], "sys": [1, 1, 1], "cider": [5.0, 6.0, 7.0]})
    joined, report = join_columns(left, right, "human", "cider", ["img", "sys"])
    assert list(joined["x"]) == [0.2, 0.3] and list(joined["y"]) == [5.0, 6.0]
    assert report.n_joined == 2 and report.n_left == 4 and report.n_right == 3
    assert report.dropped_left == [("a", 1), ("c", 2)]
    assert report.dropped_right == [("d", 1)]
    assert "dropped 2" in report.describe() and "dropped 1" in report.describe()


def test_join_refuses_duplicate_keys():
    left = pd.DataFrame({"k": [1, 1], "v": [1.0, 2.0]})
    right = pd.DataFrame({"k": [1], "w": [1.0]})
    with pytest.raises(BabelforgeError, match="occurs more than once"):
        join_columns(left, right, "v", "w", ["k"])


def test_scale_below_two_levels_is_refused():
    with pytest.raises(ValueError, match="at least 2"):
        correlate(XT, YT, scale_m=1, n_boot=0)


def test_p_value_at_n_is_scipys_test_for_a_sample_of_that_size():
    from scipy import stats

    from babelforge.eval.tools.correlation import p_value_at

    rng = np.random.default_rng(3)
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    for method, result in (
        ("pearson", stats.pearsonr(x, y)),
        ("spearman", stats.spearmanr(x, y)),
        ("kendall_b", stats.kendalltau(x, y, method="asymptotic")),
    ):
        assert p_value_at(method, float(result.statistic), 12) == pytest.approx(float(result.pvalue), rel=1e-9)


def test_mirrored_p_value_is_that_of_the_real_pairs_unless_the_doubled_one_is_asked_for():
    from scipy import stats

    from babelforge.eval.tools.correlation import p_value_at

    # Ten side-by-side judgements (as in the issue: 10 real pairs, 20 after mirroring).
    x = np.array([0.5, -0.2, 0.1, 0.3, 0.8, -0.6, 0.2, -0.1, 0.4, 0.7])
    y = np.array([2.0, -1.0, 0.5, 1.0, 2.5, -2.2, 1.1, 0.3, 0.9, 2.8])
    default = correlate(x, y, mirror=True, n_boot=0)
    for _method, result in default.items():
        assert result.n == 10 and result.mirrored and result.p_value_doubled is None
    r = default["pearson"].value
    assert default["pearson"].p_value == pytest.approx(p_value_at("pearson", r, 10))
    doubled = correlate(x, y, mirror=True, n_boot=0, doubled_p=True)["pearson"]
    assert doubled.p_value == default["pearson"].p_value
    assert doubled.p_value_doubled == pytest.approx(stats.pearsonr(*mirrored(x, y)).pvalue)
    assert doubled.p_value_doubled < doubled.p_value / 100  # the doubled n overstates the evidence
    # tau-c shares tau-b's test of S
    assert default["kendall_c"].p_value == pytest.approx(default["kendall_b"].p_value)
