"""Fedorov exchange against brute-force D-optimal designs on tiny candidate sets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpautotune.strategies._doptimal import fedorov, log_det_information


def _quadratic_grid(levels: int) -> np.ndarray:
    g = np.linspace(-1, 1, levels)
    pts = np.array(list(itertools.product(g, g)))
    x1, x2 = pts[:, 0], pts[:, 1]
    return np.column_stack([np.ones(len(pts)), x1, x2, x1**2, x2**2, x1 * x2])


def _brute_force(F: np.ndarray, n: int) -> float:
    return max(log_det_information(F[list(c)]) for c in itertools.combinations(range(len(F)), n))


@pytest.mark.parametrize("n", [6, 7, 8])
def test_matches_brute_force_on_a_3x3_quadratic(n: int) -> None:
    F = _quadratic_grid(3)
    design = fedorov(F, n, np.random.default_rng(1))
    assert len(set(design.tolist())) == n
    assert log_det_information(F[design]) == pytest.approx(_brute_force(F, n), abs=1e-9)


def test_matches_brute_force_on_a_random_candidate_set() -> None:
    rng = np.random.default_rng(5)
    F = np.column_stack([np.ones(14), rng.normal(size=(14, 3))])
    design = fedorov(F, 6, np.random.default_rng(0), restarts=10)
    assert log_det_information(F[design]) == pytest.approx(_brute_force(F, 6), abs=1e-9)


def test_one_factor_quadratic_picks_the_ends_and_the_middle() -> None:
    x = np.linspace(-1, 1, 11)
    F = np.column_stack([np.ones(11), x, x**2])
    design = fedorov(F, 3, np.random.default_rng(0))
    assert sorted(x[design].round(6).tolist()) == [-1.0, 0.0, 1.0]


def test_a_design_larger_than_the_candidates_is_every_candidate() -> None:
    F = _quadratic_grid(2)
    np.testing.assert_array_equal(fedorov(F, 10, np.random.default_rng(0)), np.arange(4))


def test_improves_on_its_random_start() -> None:
    rng = np.random.default_rng(3)
    F = np.column_stack([np.ones(300), rng.uniform(-1, 1, size=(300, 5))])
    start = rng.choice(300, 12, replace=False)
    design = fedorov(F, 12, np.random.default_rng(4), restarts=1)
    assert log_det_information(F[design]) > log_det_information(F[start]) + 1.0
