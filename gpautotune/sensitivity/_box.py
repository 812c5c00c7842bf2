"""Sobol indices over the encoded box: Saltelli's design and estimators (SALib).

The inputs are the ``d`` parameters, independent and uniform over their levels: a point
``u`` of the unit cube maps to levels by :meth:`Space.from_unit` (equal-width cells, so
every level of a discrete factor has the same mass; a real factor is uniform on its
interval). Constraints are **ignored**: the function is analysed on the whole box,
invalid configurations included (a surrogate extrapolates there).

With ``A``, ``B`` two independent ``N x d`` samples and ``A_B^(i)`` equal to ``A`` with
column ``i`` from ``B`` (SALib's ``sobol.sample``, a scrambled Sobol' sequence of
dimension ``2d``, ``N (d + 2)`` rows, or ``N (2d + 2)`` with second order), and ``f``
centred and scaled to unit variance:

    S1_i = mean(f(B) (f(A_B^i) - f(A))) / Var(f)          (Saltelli et al. 2010)
    ST_i = mean((f(A) - f(A_B^i))^2) / (2 Var(f))          (Jansen 1999)
    S2_ij = mean(f(B_A^i) f(A_B^j) - f(A) f(B)) / Var(f) - S1_i - S1_j   (Saltelli 2002)

(``SALib.analyze.sobol.first_order``, ``total_order`` and ``second_order``), computed
on every path and on ``B`` bootstrap resamples of the ``N`` base rows.
"""

from __future__ import annotations

import warnings

import numpy as np
from SALib.analyze.sobol import first_order, separate_output_values, total_order
from SALib.analyze.sobol import second_order as pair_order
from SALib.sample import sobol as sobol_sample

from gpautotune.sensitivity._estimates import Estimates
from gpautotune.sensitivity._paths import PathSampler, checked_values
from gpautotune.space import Space

__all__ = ["box_design", "box_estimates"]


def box_design(space: Space, n: int, *, second_order: bool, seed: int) -> np.ndarray:
    """Saltelli's cross-sampled design in ``[0, 1]^d`` (``n`` base rows, a power of two)."""
    problem = {"num_vars": space.dims, "names": space.names, "bounds": [[0.0, 1.0]] * space.dims}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sobol_sample.sample(
            problem, n, calc_second_order=second_order, scramble=True, seed=seed
        )


def _standardise(y: np.ndarray) -> np.ndarray:
    sd = y.std()
    return (y - y.mean()) / (sd if sd > 0 else 1.0)


def box_estimates(
    sampler: PathSampler, space: Space, n: int, *, bootstrap: int, second_order: bool, seed: int
) -> Estimates:
    """S1, ST (and S2) of every path, whole sample and ``bootstrap`` resamples."""
    d = space.dims
    index = space.from_unit(box_design(space, n, second_order=second_order, seed=seed))
    values = checked_values(sampler, index)
    rows = np.random.default_rng(seed).integers(n, size=(n, bootstrap))
    P = values.shape[0]
    s1, st = np.empty((P, bootstrap + 1, d)), np.empty((P, bootstrap + 1, d))
    s2 = np.full((P, bootstrap + 1, d, d), np.nan) if second_order else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # SALib: constant outputs give 0
        for p in range(P):
            A, B, AB, BA = separate_output_values(_standardise(values[p]), d, n, second_order)
            for j in range(d):
                s1[p, 0, j], st[p, 0, j] = first_order(A, AB[:, j], B), total_order(A, AB[:, j], B)
                if bootstrap:
                    s1[p, 1:, j] = first_order(A[rows], AB[rows, j], B[rows])
                    st[p, 1:, j] = total_order(A[rows], AB[rows, j], B[rows])
            if s2 is not None:
                for j in range(d):
                    for k in range(j + 1, d):
                        s2[p, 0, j, k] = pair_order(A, AB[:, j], AB[:, k], BA[:, j], B)
                        if bootstrap:
                            s2[p, 1:, j, k] = pair_order(
                                A[rows], AB[rows, j], AB[rows, k], BA[rows, j], B[rows]
                            )
    return Estimates(s1, st, s2, evaluations=len(index) * P, base=n)
