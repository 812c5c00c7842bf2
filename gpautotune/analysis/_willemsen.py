"""The score of Willemsen et al.: progress from random search towards the optimum.

At budget ``b``, with ``f_s(b)`` a strategy's mean best-so-far, ``f_r(b)`` the expected
best of random search and ``f*`` the optimum::

    P(b) = (f_s(b) - f_r(b)) / (f* - f_r(b))

so 0 is random search, 1 the optimum, and negative values worse than random. A
strategy's overall score is the mean of ``P(b)`` over ``b = 1 .. B``.

For a replayed table the random expectation is exact. Random search draws ``b`` of the
``N`` valid measured values without replacement; with the values sorted ascending,
``v_(1) <= ... <= v_(N)``, the minimum is ``v_(k)`` when the draw contains rank ``k``
and none of the ranks below it, so::

    P(min = v_(k)) = C(N - k, b - 1) / C(N, b),   k = 1 .. N - b + 1
    E[min_b]       = Σ_k v_(k) · C(N - k, b - 1) / C(N, b)

(the hockey-stick identity Σ_k C(N-k, b-1) = C(N, b) makes these probabilities sum
to one). The binomials are evaluated in log space (``gammaln``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["expected_random_best", "random_search_expectation", "willemsen_score"]


def _log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def expected_random_best(values: np.ndarray, budgets: np.ndarray | int) -> np.ndarray:
    """Expected minimum of ``b`` draws without replacement from ``values``, for each ``b``.

    Args:
        values: the ``N`` valid measured values (any order; NaN dropped).
        budgets: the budgets ``b`` (1 <= b <= N; larger ones are clipped to N).

    Returns:
        ``E[min_b]`` for each budget, in the order given.
    """
    v = np.sort(np.asarray(values, dtype=float)[~np.isnan(values)])
    n = len(v)
    if n == 0:
        raise ValueError("no values to draw from")
    b = np.minimum(np.atleast_1d(np.asarray(budgets, dtype=float)), n)
    if np.any(b < 1):
        raise ValueError(f"budgets must be >= 1, got {np.min(b)}")
    k = np.arange(1, n + 1, dtype=float)
    out = np.empty(len(b))
    for i, bi in enumerate(b):
        ranks = k[: int(n - bi + 1)]
        weights = np.exp(
            _log_comb(n - ranks, np.full_like(ranks, bi - 1)) - _log_comb(np.float64(n), bi)
        )
        out[i] = float(np.dot(weights, v[: len(ranks)]) / weights.sum())
    return out


def random_search_expectation(
    values: np.ndarray, n_failed: int, budget: np.ndarray | int
) -> np.ndarray:
    """Expected best of random search on a table with failures that cost an evaluation.

    ``b`` of the ``N = n + n_failed`` rows are drawn without replacement, the failed
    ones ranking after every value; the best ok value is ``v_(k)`` with probability
    ``C(N - k, b - 1) / C(N, b)``, and the expectation is conditional on at least one ok
    draw (probability ``1 - C(n_failed, b) / C(N, b)``), as a run without an ok trial has
    no best value.

    Args:
        values: the ``n`` ok values (NaN dropped).
        n_failed: rows that fail when measured.
        budget: the budgets ``b`` (at least 1; clipped to ``N``).

    Returns:
        ``E[best of b draws | an ok one]`` for each budget, in the order given.
    """
    v = np.sort(np.asarray(values, dtype=float)[~np.isnan(values)])
    n, total = len(v), len(v) + int(n_failed)
    if n == 0 or n_failed < 0:
        raise ValueError(f"need ok values and n_failed >= 0, got {n} and {n_failed}")
    b = np.minimum(np.atleast_1d(np.asarray(budget, dtype=float)), total)
    if np.any(b < 1):
        raise ValueError(f"budgets must be >= 1, got {np.min(b)}")
    out = np.empty(len(b))
    for i, bi in enumerate(b):
        ranks = np.arange(1, min(n, int(total - bi + 1)) + 1, dtype=float)
        log_weights = _log_comb(total - ranks, np.full_like(ranks, bi - 1))
        weights = np.exp(log_weights - _log_comb(np.float64(total), bi))
        out[i] = float(np.dot(weights, v[: len(ranks)]) / weights.sum())
    return out


def willemsen_score(
    strategy_mean: np.ndarray, random_mean: np.ndarray, optimum: float
) -> np.ndarray:
    """``(f_s - f_r) / (f* - f_r)`` elementwise (NaN where random search is already optimal)."""
    f_s, f_r = np.asarray(strategy_mean, dtype=float), np.asarray(random_mean, dtype=float)
    denominator = optimum - f_r
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator != 0, (f_s - f_r) / denominator, np.nan)
