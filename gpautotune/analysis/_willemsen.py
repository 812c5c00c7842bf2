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

Willemsen et al.'s own implementation (the ``autotuning_methodology`` package, 1.1.0)
computes the same ratio with two other conventions, both rank-based:

* random search at budget ``b`` is the value at index ``round(b (N + 1) / (b + 1))``
  (at most ``N - 1``) of the values sorted worst first (its calculated baseline).
  The expected rank of the best of ``b`` draws is ``(N + 1) / (b + 1)`` counted from the
  best, i.e. index ``N - (N + 1) / (b + 1)``; the package's index is one more, one rank
  better than that expectation. It is a value at a rank, not the expected value;
* the strategy is its median run: per budget, the value at the rounded median of the
  runs' best-so-far ranks in the sorted table.

``methodology_score(..., convention="package")`` reproduces those numbers exactly (the
tests compare them with the package); the default ``"exact"`` is the mean run against
the exact expectation above.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy.special import gammaln

__all__ = [
    "expected_random_best",
    "expected_rank_random_best",
    "median_run_curve",
    "methodology_score",
    "random_best_moments",
    "willemsen_score",
]


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


def _table(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    v = np.sort(v[~np.isnan(v)])
    if len(v) == 0:
        raise ValueError("no values to draw from")
    return v


def expected_rank_random_best(values: np.ndarray, budgets: np.ndarray | int) -> np.ndarray:
    """Random search's best at each budget as ``autotuning_methodology`` computes it.

    The value at index ``min(round(b (N + 1) / (b + 1)), N - 1)`` of the ``N`` valid
    values sorted worst first (module docstring), for minimisation.
    """
    worst_first = _table(values)[::-1]
    n = len(worst_first)
    b = np.atleast_1d(np.asarray(budgets, dtype=float))
    if np.any(b < 1):
        raise ValueError(f"budgets must be >= 1, got {np.min(b)}")
    index = np.minimum(np.round(b * (n + 1) / (b + 1)), n - 1).astype(int)
    return worst_first[index]


def median_run_curve(curves: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The median run's best-so-far, by rank in the table (``autotuning_methodology``).

    Args:
        curves: best-so-far values, shape ``(runs, budgets)``, each one of ``values``
            (NaN where a run has none yet).
        values: the table of measured values.

    Returns:
        Per budget, the table value at the rounded (half to even) median rank.
    """
    table = _table(values)
    ranks = np.searchsorted(table, np.asarray(curves, dtype=float), side="left").astype(float)
    ranks[np.isnan(curves)] = np.nan
    return table[np.round(np.nanmedian(ranks, axis=0)).astype(int)]


def methodology_score(
    curves: np.ndarray,
    values: np.ndarray,
    optimum: float,
    *,
    convention: Literal["exact", "package"] = "exact",
) -> np.ndarray:
    """``P(b)`` for ``b = 1 .. B`` of a strategy's runs on a measured table.

    Args:
        curves: the runs' best-so-far values, shape ``(runs, B)``.
        values: the table's measured values (random search draws from them).
        optimum: the best value ``f*``.
        convention: ``"exact"``: the mean run against the exact random expectation;
            ``"package"``: the median run against the package's random curve (module
            docstring), as ``autotuning_methodology`` computes it over function
            evaluations ``1 .. B``.

    Returns:
        ``P(b)``, shape ``(B,)``; its mean is the strategy's overall score.
    """
    curves = np.atleast_2d(np.asarray(curves, dtype=float))
    budgets = np.arange(1, curves.shape[1] + 1)
    if convention == "exact":
        return willemsen_score(
            np.nanmean(curves, axis=0), expected_random_best(values, budgets), optimum
        )
    if convention == "package":
        return willemsen_score(
            median_run_curve(curves, values), expected_rank_random_best(values, budgets), optimum
        )
    raise ValueError(f"convention must be 'exact' or 'package', got {convention!r}")
