"""Reference functions with known Sobol indices (Ishigami; Sobol's g-function, continuous
and on a discrete grid), computed from their analytic variance decompositions, as
SALib's ``test_functions``: the tests and ``benchmarks/sensitivity.py`` check the
estimators against them."""

from __future__ import annotations

import numpy as np

from gpautotune.space import Ordinal, Real, Space

G_COEFFICIENTS = (0.0, 1.0, 4.5, 9.0, 99.0, 99.0)


def ishigami_space() -> Space:
    return Space([Real(f"x{i}", -np.pi, np.pi) for i in (1, 2, 3)], name="ishigami")


def ishigami(space: Space, a: float = 7.0, b: float = 0.1):
    def f(index: np.ndarray) -> np.ndarray:
        c = space.columns(index)
        return np.sin(c["x1"]) + a * np.sin(c["x2"]) ** 2 + b * c["x3"] ** 4 * np.sin(c["x1"])

    return f


def ishigami_truth(a: float = 7.0, b: float = 0.1) -> tuple[np.ndarray, np.ndarray, float]:
    """(S1, ST, S13): V1 = 1/2 (1 + b π⁴/5)², V2 = a²/8, V13 = 8 b² π⁸ / 225."""
    v1 = 0.5 * (1 + b * np.pi**4 / 5) ** 2
    v2 = a**2 / 8
    v13 = 8 * b**2 * np.pi**8 / 225
    total = v1 + v2 + v13
    return np.array([v1, v2, 0.0]) / total, np.array([v1 + v13, v2, v13]) / total, v13 / total


def g_space(levels: int | None = None, coefficients=G_COEFFICIENTS) -> Space:
    """Unit interval per factor, or ``levels`` cell midpoints (a discrete grid)."""
    if levels is None:
        return Space([Real(f"x{i + 1}", 0.0, 1.0) for i in range(len(coefficients))], name="g")
    grid = tuple(float(v) for v in (np.arange(levels) + 0.5) / levels)
    return Space(
        [Ordinal(f"x{i + 1}", grid, scale="linear") for i in range(len(coefficients))], name="g"
    )


def g_function(space: Space, coefficients=G_COEFFICIENTS):
    a = np.asarray(coefficients)

    def f(index: np.ndarray) -> np.ndarray:
        c = space.columns(index)
        x = np.column_stack([c[f"x{i + 1}"] for i in range(len(a))])
        return np.prod((np.abs(4 * x - 2) + a) / (1 + a), axis=1)

    return f


def g_truth(
    levels: int | None = None, coefficients=G_COEFFICIENTS
) -> tuple[np.ndarray, np.ndarray]:
    """Exact (S1, ST) of the product ``Π g_i``: with factor means ``m_i`` and variances
    ``v_i`` (continuous: m = 1, v = 1/(3(1+a)²); on a grid, over its points),
    ``V = Π(v_i + m_i²) - Π m_i²``, ``V_i = v_i Π_{j≠i} m_j²``,
    ``VT_i = v_i Π_{j≠i}(v_j + m_j²)``."""
    a = np.asarray(coefficients)
    if levels is None:
        m, v = np.ones(len(a)), 1.0 / (3 * (1 + a) ** 2)
    else:
        x = (np.arange(levels) + 0.5) / levels
        g = (np.abs(4 * x[None, :] - 2) + a[:, None]) / (1 + a[:, None])
        m, v = g.mean(axis=1), g.var(axis=1)
    second = v + m**2
    total = np.prod(second) - np.prod(m**2)
    first = np.array([v[i] * np.prod(np.delete(m**2, i)) for i in range(len(a))])
    totals = np.array([v[i] * np.prod(np.delete(second, i)) for i in range(len(a))])
    return first / total, totals / total
