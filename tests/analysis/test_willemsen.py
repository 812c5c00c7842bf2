from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpautotune.analysis import (
    expected_random_best,
    expected_rank_random_best,
    median_run_curve,
    methodology_score,
    random_best_moments,
    willemsen_score,
)


def test_matches_enumerating_every_draw_with_ties():
    values = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])  # a tie at the minimum
    for b in range(1, len(values) + 1):
        brute = np.mean([min(c) for c in itertools.combinations(values, b)])
        assert expected_random_best(values, b)[0] == pytest.approx(brute, rel=1e-12)


def test_matches_a_monte_carlo_estimate():
    rng = np.random.default_rng(0)
    values = np.round(rng.lognormal(0.0, 0.5, 500), 2)  # many ties
    budgets = np.array([1, 7, 40, 120])
    exact = expected_random_best(values, budgets)
    draws = 20_000
    for b, e in zip(budgets, exact, strict=True):
        mins = np.array([rng.choice(values, b, replace=False).min() for _ in range(draws)])
        sem = mins.std(ddof=1) / np.sqrt(draws)
        assert abs(mins.mean() - e) < 4 * sem + 1e-12


def test_end_points_and_budgets_beyond_the_table():
    values = np.array([2.0, 8.0, 5.0, np.nan])
    assert expected_random_best(values, [1, 3, 10]).tolist() == pytest.approx([5.0, 2.0, 2.0])
    with pytest.raises(ValueError):
        expected_random_best(values, 0)


def test_score_is_zero_for_random_one_at_the_optimum_negative_when_worse():
    random = np.array([10.0, 6.0, 4.0, 2.0])
    strategy = np.array([10.0, 4.0, 5.0, 2.0])
    assert willemsen_score(strategy, random, 2.0)[:3].tolist() == pytest.approx([0.0, 0.5, -0.5])
    assert np.isnan(willemsen_score(strategy, random, 2.0)[3])  # random already optimal
    assert willemsen_score(random, random, 2.0)[0] == 0.0


def test_failures_cost_a_draw_and_give_no_value():
    values = np.array([3.0, 1.0, 4.0, 1.5, 5.0])
    rows = [*values, np.nan, np.nan, np.nan]  # three rows that fail when drawn
    for b in range(1, len(rows) + 1):
        bests = [np.nanmin(c) for c in itertools.combinations(rows, b) if not np.isnan(c).all()]
        mean, sd = random_best_moments(values, b, failures=3)
        assert mean[0] == pytest.approx(np.mean(bests), rel=1e-12)
        assert sd[0] == pytest.approx(np.std(bests), rel=1e-9, abs=1e-12)
    # without failures the draw is as before; failures make the expected best worse
    assert expected_random_best(values, 2, failures=0)[0] == pytest.approx(
        np.mean([min(c) for c in itertools.combinations(values, 2)])
    )
    assert expected_random_best(values, 2, failures=3)[0] > expected_random_best(values, 2)[0]


def test_the_packages_random_curve_is_one_rank_better_than_the_expected_rank():
    table = np.array([5.0, 1.0, 3.0, 9.0, 7.0])  # worst first: 9 7 5 3 1
    # b = 1: expected rank (N+1)/2 = 3 from the best (value 5), the package takes rank 2;
    # b = 2: expected rank 2 (value 3), the package takes the best
    assert expected_rank_random_best(table, [1, 2, 100]).tolist() == [3.0, 1.0, 1.0]
    assert expected_random_best(table, 1)[0] == pytest.approx(5.0)


def test_median_run_is_taken_by_rank_rounded_half_to_even():
    table = np.array([1.0, 2.0, 3.0, 4.0])
    curves = np.array([[4.0, 1.0], [1.0, 1.0], [2.0, 2.0], [4.0, 1.0]])  # four runs
    # budget 1: ranks 3, 0, 1, 3 -> median 2 -> 3.0; budget 2: ranks 0 0 1 0 -> 0 -> 1.0
    assert median_run_curve(curves, table).tolist() == [3.0, 1.0]
    assert median_run_curve(curves[:2], table).tolist() == [3.0, 1.0]  # median 1.5 -> 2


def test_methodology_score_conventions():
    table = np.array([1.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    curves = np.array([[3.0, 2.0], [4.0, 4.0], [6.0, 1.0]])
    exact = methodology_score(curves, table, 1.0)
    random = expected_random_best(table, [1, 2])
    np.testing.assert_allclose(exact, (curves.mean(axis=0) - random) / (1.0 - random))
    package = methodology_score(curves, table, 1.0, convention="package")
    rank_random = expected_rank_random_best(table, [1, 2])
    assert rank_random.tolist() == [4.0, 2.0]
    median = np.array([4.0, 2.0])  # the median run by rank at each budget
    np.testing.assert_allclose(package, (median - rank_random) / (1.0 - rank_random))
    with pytest.raises(ValueError, match="convention"):
        methodology_score(curves, table, 1.0, convention="median")
