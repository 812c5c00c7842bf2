"""Constrained sampling of a :class:`~gpautotune.space.Space` (FILTER_SOBOL and friends)."""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.stats import qmc

from gpautotune.exceptions import SpaceError

__all__ = ["sample_index", "unit_sample"]

METHODS = ("sobol", "random", "lhs")
MAX_RAW = 1 << 24


def unit_sample(method: str, dims: int, n: int, seed: int | None) -> np.ndarray:
    """``n`` points in the unit cube. For Sobol, ``n`` is rounded up to a power of two and a
    larger ``n`` with the same seed extends the same sequence (prefix property)."""
    if method == "sobol":
        m = max(int(math.ceil(math.log2(max(n, 1)))), 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return qmc.Sobol(dims, scramble=True, seed=seed).random_base2(m)
    if method == "random":
        return np.random.default_rng(seed).random((n, dims))
    if method == "lhs":
        return qmc.LatinHypercube(dims, seed=seed).random(n)
    raise SpaceError(f"unknown sampling method {method!r}; choose one of {list(METHODS)}")


def sample_index(space, n: int, *, method: str = "sobol", seed: int | None = None, max_raw: int = MAX_RAW) -> np.ndarray:
    """Index matrix of ``n`` distinct valid configurations, in sampling order.

    The raw sample starts at ``max(64, 2n)`` points and doubles until enough valid,
    distinct points survive the predicates.
    """
    if method not in METHODS:
        raise SpaceError(f"unknown sampling method {method!r}; choose one of {list(METHODS)}")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise SpaceError(f"the number of samples must be a non-negative integer, got {n!r}")
    if n == 0:
        return np.empty((0, space.dims))
    raw = max(64, 2 * int(n))
    while True:
        index = space.from_unit(unit_sample(method, space.dims, raw, seed))
        index = space.unique_rows(index[space.valid_mask(index)])
        if len(index) >= n:
            return index[:n]
        if raw >= max_raw:
            raise SpaceError(
                f"only {len(index)} distinct valid configurations in {raw} raw {method} points, "
                f"{n} wanted: the constraints admit too few (check them with `gpautotune space`)"
            )
        # Grow by the observed valid fraction (at least doubling) to limit iterations.
        grow = 2 if len(index) == 0 else max(2, int(2 ** math.ceil(math.log2(n / len(index) * 1.2))))
        raw = min(raw * grow, max_raw)
