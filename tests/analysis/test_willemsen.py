from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpautotune.analysis import (
    expected_random_best,
    random_search_expectation,
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


def test_random_search_expectation_counts_failed_rows_as_spent_draws():
    values = np.array([3.0, 1.0, 4.0, 1.5, 5.0])
    rows = np.concatenate([values, np.full(3, np.inf)])  # three rows that fail
    for b in range(1, len(rows) + 1):
        bests = [min(c) for c in itertools.combinations(rows, b)]
        brute = np.mean([x for x in bests if np.isfinite(x)])  # runs with an ok draw
        exact = random_search_expectation(values, 3, b)[0]
        assert exact == pytest.approx(brute, rel=1e-12)
    assert random_search_expectation(values, 0, [2, 4]) == pytest.approx(
        expected_random_best(values, [2, 4])
    )
