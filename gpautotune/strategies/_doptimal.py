"""D-optimal designs over a finite candidate set: Fedorov's exchange algorithm.

Given the model matrix ``F`` of ``N`` candidate points (``(N, p)``, intercept included)
a design is a set ``S`` of ``n`` distinct rows; it is D-optimal when it maximises
``det(X_S^T X_S)``. Fedorov's algorithm (Fedorov 1972; Atkinson et al., *Optimum
Experimental Designs*, ch. 12; R's ``AlgDesign::optFederov``) starts from a random
design and exchanges design points ``x_i`` for candidates ``x_j``. With
``M = X_S^T X_S``, ``d(a, b) = a^T M^{-1} b`` and ``d(a) = d(a, a)``, the exchange
multiplies the determinant by

    1 + Delta(i, j),  Delta(i, j) = d(x_j) - d(x_i) - [d(x_i) d(x_j) - d(x_i, x_j)^2],

This module implements the *modified* Fedorov algorithm (Cook & Nachtsheim 1980): each
design point in turn is exchanged for the candidate maximising ``Delta`` (when
``Delta > tol``), ``M^{-1}`` being kept up to date by Sherman-Morrison updates; sweeps
repeat until one makes no exchange. It reaches the same designs as the original
best-pair search for a fraction of its cost. Several random starts guard against
local optima. When ``n < p`` the information matrix is singular: a small ridge
``M + eps I`` keeps the criterion defined (the design then spans as many directions as
it can).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fedorov", "log_det_information"]

_RIDGE = 1e-8


def log_det_information(X: np.ndarray, ridge: float = _RIDGE) -> float:
    """``log det(X^T X + ridge I)``, the D-criterion of a design matrix."""
    sign, value = np.linalg.slogdet(X.T @ X + ridge * np.eye(X.shape[1]))
    return float(value) if sign > 0 else -np.inf


def fedorov(
    F: np.ndarray,
    n: int,
    rng: np.random.Generator,
    *,
    prior: np.ndarray | None = None,
    restarts: int = 5,
    max_sweeps: int = 100,
    tol: float = 1e-6,
) -> np.ndarray:
    """Rows of ``F`` forming an (approximately) D-optimal design of ``n`` distinct points.

    Args:
        F: model matrix of the candidate points, ``(N, p)``; scale its columns to similar
            magnitudes (the optimal design does not change, the arithmetic is safer).
        n: design size; all ``N`` rows are returned when ``n >= N``.
        rng: source of the random starting designs.
        prior: model matrix of points already measured (``(m, p)``): they count in the
            information matrix ``M`` but are not candidates, so the design *augments*
            them with the ``n`` points that add the most information.
        restarts: number of random starts; the best final design is kept.
        max_sweeps: passes over the design points allowed per start.
        tol: an exchange is made only when it multiplies the determinant by more than ``1 + tol``.

    Returns:
        The selected row positions (``(n,)`` int array, in selection order).
    """
    F = np.asarray(F, dtype=float)
    N = len(F)
    if n >= N:
        return np.arange(N)
    P = (
        np.empty((0, F.shape[1]))
        if prior is None
        else np.asarray(prior, dtype=float).reshape(-1, F.shape[1])
    )
    best, best_value = None, -np.inf
    for _ in range(max(1, restarts)):
        design = _exchange(F, P, rng.choice(N, size=n, replace=False), max_sweeps, tol)
        value = log_det_information(np.vstack([P, F[design]]))
        if value > best_value + 1e-12 or best is None:
            best, best_value = design, value
    return best


def _exchange(
    F: np.ndarray, P: np.ndarray, design: np.ndarray, max_sweeps: int, tol: float
) -> np.ndarray:
    """Modified Fedorov sweeps from a starting design (rank-one updates of ``M^{-1}``)."""
    design = design.copy()
    in_design = np.zeros(len(F), dtype=bool)
    in_design[design] = True
    for _ in range(max_sweeps):
        X = F[design]
        m_inv = np.linalg.inv(X.T @ X + P.T @ P + _RIDGE * np.eye(F.shape[1]))
        B = F @ m_inv  # row j: (M^{-1} x_j)^T
        d_all = np.einsum("ij,ij->i", B, F)
        changed = False
        for i in range(len(design)):
            a = design[i]
            d_i = d_all[a]
            cross = B @ F[a]  # d(x_j, x_i) for every candidate j
            delta = d_all - d_i - (d_i * d_all - cross**2)
            delta[in_design] = -np.inf
            j = int(np.argmax(delta))
            if not delta[j] > tol:
                continue
            # M <- M + x_j x_j^T - x_a x_a^T, by two Sherman-Morrison updates.
            for x, sign in ((F[j], 1.0), (F[a], -1.0)):
                u = m_inv @ x
                c = 1.0 + sign * float(x @ u)
                Fu = F @ u
                m_inv -= sign * np.outer(u, u) / c
                B -= sign * np.outer(Fu, u) / c
                d_all -= sign * Fu**2 / c
            in_design[a], in_design[j] = False, True
            design[i] = j
            changed = True
        if not changed:
            break
    return design
