"""The methodology score as Willemsen et al.'s ``autotuning_methodology`` package computes it.

A reference to check :func:`gpautotune.analysis.methodology_score` against (its
``convention="package"`` must agree bit for bit). Drives the package's own classes over
function evaluations ``1 .. B``: its calculated random-search baseline
(``RandomSearchCalculatedBaseline``), its curve of a stochastic strategy
(``StochasticOptimizationAlgorithm``, the median run by rank in the table) and its
standardisation ``(curve - random) / (optimum - random)``. The package reads both from
files its experiments write (a search-space cache, run results); here the few attributes
those methods read are set directly from in-memory arrays. Needs the optional
``autotuning-methodology`` package (the ``dev`` extra).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

__all__ = ["reference_methodology_score"]


def reference_methodology_score(curves: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``P(b)``, ``b = 1 .. B``, of runs with best-so-far ``curves`` (shape ``(runs, B)``)
    on a minimisation table ``values``, computed by ``autotuning_methodology``.

    Raises:
        ModuleNotFoundError: ``autotuning_methodology`` is not installed.
    """
    from autotuning_methodology.baseline import RandomSearchCalculatedBaseline
    from autotuning_methodology.curves import StochasticOptimizationAlgorithm

    table = np.sort(np.asarray(values, dtype=float))
    stats = SimpleNamespace(
        objective_performances_total_sorted=table,
        objective_performances_total_sorted_nan=table,
        minimization=True,
        total_performance_absolute_optimum=lambda: float(table[0]),
    )
    baseline = RandomSearchCalculatedBaseline(stats)
    runs, budget = np.shape(curves)
    fevals = np.arange(1, budget + 1)
    strategy = object.__new__(StochasticOptimizationAlgorithm)
    strategy.display_name = "strategy"
    strategy._x_fevals = np.tile(fevals[:, None], (1, runs)).astype(float)
    strategy._y = np.asarray(curves, dtype=float).T
    _, _, curve, _, _ = strategy.get_curve_over_fevals(fevals, dist=table, return_split=False)
    return baseline.get_standardised_curve(fevals, curve, x_type="fevals")
