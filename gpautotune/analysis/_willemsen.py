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
to one). Rows that fail when drawn (a replayed Kernel Tuner cache holds them) cost a
draw and give no value: with ``F`` of them, ``N`` counts every row and ``k`` runs over
the measured ranks only, and the result is conditional on a draw holding at least one
value. The binomials are evaluated in log space (``gammaln``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

__all__ = ["expected_random_best", "random_best_moments", "willemsen_score"]


def _log_comb(n: np.ndarray, k: np.ndarray) -> np.ndarray:
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def random_best_moments(
    values: np.ndarray, budgets: np.ndarray | int, *, failures: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation of random search's best after ``b`` evaluations.

    Random search draws ``b`` of ``N = n + failures`` rows without replacement: the ``n``
    measured ``values`` and ``failures`` rows that cost a draw and give no value. With
    the values sorted ascending, the best is ``v_(k)`` when the draw holds rank ``k`` and
    no better rank: ``P(best = v_(k)) = C(N - k, b - 1) / C(N, b)``. The moments are
    conditional on at least one value drawn (probability ``1 - C(failures, b) / C(N, b)``),
    as a run's best is undefined before its first success.

    Args:
        values: the ``n`` measured values (any order; NaN dropped).
        budgets: the budgets ``b`` (1 <= b; larger than ``N`` is clipped to ``N``).
        failures: rows that fail when drawn.

    Returns:
        ``(mean, sd)``: arrays with one entry per budget, in the order given.
    """
    v = np.sort(np.asarray(values, dtype=float)[~np.isnan(values)])
    n = len(v)
    if n == 0:
        raise ValueError("no values to draw from")
    if failures < 0:
        raise ValueError(f"failures must be >= 0, got {failures}")
    total = n + int(failures)
    b = np.minimum(np.atleast_1d(np.asarray(budgets, dtype=float)), total)
    if np.any(b < 1):
        raise ValueError(f"budgets must be >= 1, got {np.min(b)}")
    k = np.arange(1, n + 1, dtype=float)
    mean, sd = np.empty(len(b)), np.empty(len(b))
    for i, bi in enumerate(b):
        last = int(min(n, total - bi + 1))
        ranks = k[:last]
        weights = np.exp(
            _log_comb(total - ranks, np.full_like(ranks, bi - 1)) - _log_comb(np.float64(total), bi)
        )
        weights /= weights.sum()
        mean[i] = float(np.dot(weights, v[:last]))
        sd[i] = float(np.sqrt(max(np.dot(weights, (v[:last] - mean[i]) ** 2), 0.0)))
    return mean, sd


def expected_random_best(
    values: np.ndarray, budgets: np.ndarray | int, *, failures: int = 0
) -> np.ndarray:
    """Expected minimum of ``b`` draws without replacement from ``values`` (and
    ``failures`` rows that give no value), for each ``b``; see :func:`random_best_moments`.

    Args:
        values: the ``N`` valid measured values (any order; NaN dropped).
        budgets: the budgets ``b`` (1 <= b <= N; larger ones are clipped to N).
        failures: rows that cost a draw and give no value.

    Returns:
        ``E[min_b]`` for each budget, in the order given.
    """
    return random_best_moments(values, budgets, failures=failures)[0]


def willemsen_score(
    strategy_mean: np.ndarray, random_mean: np.ndarray, optimum: float
) -> np.ndarray:
    """``(f_s - f_r) / (f* - f_r)`` elementwise (NaN where random search is already optimal)."""
    f_s, f_r = np.asarray(strategy_mean, dtype=float), np.asarray(random_mean, dtype=float)
    denominator = optimum - f_r
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator != 0, (f_s - f_r) / denominator, np.nan)
