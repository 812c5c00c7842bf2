from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from gpautotune import analysis

compare_paired, compare_samples = analysis.compare_paired, analysis.compare_samples
describe, holm, verdict = analysis.describe, analysis.holm, analysis.verdict
mean_band, mean_ci = analysis.mean_band, analysis.mean_ci


def test_describe_a_known_sample():
    s = describe(np.array([5.0, 1.0, 4.0, 2.0, 3.0]))
    assert (s.n, s.mean, s.median, s.min, s.max) == (5, 3.0, 3.0, 1.0, 5.0)
    assert 1.0 < s.ci_low < 3.0 < s.ci_high < 5.0


def test_intervals_stay_inside_the_possible_range():
    # slowdowns: most runs at the optimum (1), one far off; a t-interval goes below 1
    slowdowns = np.array([1.0] * 9 + [3.0])
    mean, sem = slowdowns.mean(), stats.sem(slowdowns)
    assert mean - stats.t.ppf(0.975, 9) * sem < 1.0  # what a t-interval would claim
    low, high = mean_ci(slowdowns)
    assert 1.0 <= low < mean < high <= 3.0
    # Booth values (>= 0), mostly 0
    low, _ = mean_ci(np.array([0.0] * 7 + [5.0, 40.0]))
    assert low >= 0.0


def test_the_bootstrap_interval_covers_a_normal_mean():
    x = np.random.default_rng(3).normal(10.0, 1.0, 400)
    low, high = mean_ci(x)
    half = 1.96 / math.sqrt(400)
    assert low == pytest.approx(x.mean() - half, abs=0.03)
    assert high == pytest.approx(x.mean() + half, abs=0.03)


def test_mean_band_by_column_with_unobserved_runs():
    values = np.array([[np.nan, 1.0, 1.0], [2.0, 2.0, 1.0], [4.0, 3.0, 1.0]])
    mean, low, high = mean_band(values)
    np.testing.assert_allclose(mean, [3.0, 2.0, 1.0])
    assert low[0] >= 2.0 and high[0] <= 4.0  # column 0: two observed runs only
    assert low[2] == high[2] == 1.0  # every run the same
    mean, low, high = mean_band(np.array([[np.nan, 1.0]]))
    assert np.isnan(mean[0]) and np.isnan(low[1]) and mean[1] == 1.0


def test_degenerate_samples():
    assert mean_ci(np.array([2.0, 2.0, 2.0])) == (2.0, 2.0)
    assert all(math.isnan(v) for v in mean_ci(np.array([1.0])))
    assert describe(np.array([])).n == 0


def test_separated_samples_differ_significantly():
    y = np.arange(10.0, 15.0)
    d = compare_samples(y - 10.0, y)
    assert d.diff == -10.0 and d.ci_low <= -10.0 <= d.ci_high < 0
    assert d.test == "mann-whitney" and d.statistic == 0.0
    assert d.p_value == pytest.approx(2 / math.comb(10, 5))  # exact two-sided test
    assert d.p_better == 1.0 and d.relative == pytest.approx(-10.0 / 12.0)
    assert verdict(d) == "better"
    assert verdict(compare_samples(y, y - 10.0)) == "worse"


def test_pairing_finds_a_small_consistent_gain_that_seeds_hide():
    # each seed's problem differs a lot (seed effect), the strategy gains 1% on each
    rng = np.random.default_rng(0)
    reference = rng.uniform(1.0, 3.0, 30)
    x = reference * 0.97
    unpaired, paired = compare_samples(x, reference), compare_paired(x, reference)
    assert unpaired.p_value > 0.05 and verdict(unpaired) == "no clear difference"
    assert paired.test == "wilcoxon" and paired.p_value < 1e-6
    assert paired.p_better == 1.0 and paired.ci_high < 0
    assert verdict(paired) == "better"


def test_paired_ties_are_no_difference():
    x = np.array([1.0, 1.0, 2.0])
    d = compare_paired(x, x.copy())
    assert d.p_value == 1.0 and d.p_better == 0.5 and verdict(d) == "no clear difference"
    with pytest.raises(ValueError, match="length"):
        compare_paired(x, x[:2])


def test_holm_adjusts_across_strategies():
    rng = np.random.default_rng(2)
    y = rng.normal(1.0, 0.1, 40)
    family = [compare_paired(y + rng.normal(shift, 0.05, 40), y) for shift in (-0.1, -0.02, 0.0)]
    p = np.array([d.p_value for d in family])
    order = np.argsort(p)  # Holm: the j-th smallest times (m - j), then a running maximum
    expected = np.maximum.accumulate(np.minimum(1.0, (3 - np.arange(3)) * p[order]))
    adjusted = holm(family)
    np.testing.assert_allclose([adjusted[i].p_adjusted for i in order], expected)
    assert [a.p_value for a in adjusted] == list(p)  # the raw p-values are kept
    lone = family[1]
    assert holm([lone])[0].p_adjusted == lone.p_value  # a family of one: unchanged
    untested = compare_paired(y[:1], y[:1])
    assert math.isnan(holm([untested, lone])[0].p_adjusted)


def test_significant_but_not_practical():
    y = 100.0 + np.linspace(0.0, 0.5, 40)
    d = compare_samples(y - 0.6, y)  # every run better, by about 0.6%
    assert d.p_value < 1e-6 and d.ci_high < 0
    assert verdict(d, practical=0.01).startswith("better, not practically")
    assert verdict(d, practical=0.001) == "better"


def test_same_distribution_is_no_clear_difference():
    rng = np.random.default_rng(1)
    x, y = rng.normal(1.0, 0.1, 200), rng.normal(1.0, 0.1, 200)
    d = compare_samples(x, y)
    assert d.ci_low < 0 < d.ci_high
    assert verdict(d) == "no clear difference"
    assert verdict(compare_samples(x[:1], y)) == "too few repetitions"
