from __future__ import annotations

import math

import numpy as np
import pytest

from gpautotune.analysis import compare_samples, describe, mean_ci, verdict


def test_describe_a_known_sample():
    s = describe(np.array([5.0, 1.0, 4.0, 2.0, 3.0]))
    half = 2.7764451051977987 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4) * s / sqrt(n)
    assert (s.n, s.mean, s.median, s.min, s.max) == (5, 3.0, 3.0, 1.0, 5.0)
    assert (s.ci_low, s.ci_high) == pytest.approx((3.0 - half, 3.0 + half))


def test_degenerate_samples():
    assert mean_ci(np.array([2.0, 2.0, 2.0])) == (2.0, 2.0)
    assert all(math.isnan(v) for v in mean_ci(np.array([1.0])))
    assert describe(np.array([])).n == 0


def test_separated_samples_differ_significantly():
    y = np.arange(10.0, 15.0)
    d = compare_samples(y - 10.0, y)
    assert d.diff == -10.0 and d.ci_low <= -10.0 <= d.ci_high < 0
    assert d.u == 0.0 and d.p_value == pytest.approx(2 / math.comb(10, 5))  # exact two-sided test
    assert d.p_better == 1.0 and d.relative == pytest.approx(-10.0 / 12.0)
    assert verdict(d) == "better"
    assert verdict(compare_samples(y, y - 10.0)) == "worse"


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
