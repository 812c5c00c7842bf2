"""Constrained sampling of a :class:`~gpautotune.space.Space` (FILTER_SOBOL and friends)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpautotune.exceptions import SpaceError

__all__ = ["sample_index", "filter_index", "unit_sample"]

METHODS = ("sobol", "random", "lhs")
MAX_RAW = 1 << 24


def unit_sample(method: str, dims: int, n: int, seed: int | None) -> np.ndarray:
    """``n`` points in the unit cube. For Sobol, ``n`` is rounded up to a power of two and a
    larger ``n`` with the same seed extends the same sequence (prefix property)."""
    from scipy.stats import qmc  # imported here: scipy.stats takes most of a second

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


def sample_index(
    space,
    n: int,
    *,
    method: str = "sobol",
    seed: int | None = None,
    max_raw: int = MAX_RAW,
    strict: bool = True,
) -> np.ndarray:
    """Index matrix of ``n`` distinct valid configurations, in sampling order.

    Raw points are drawn from one sequence (Sobol or random) in chunks of at most
    :data:`CHUNK` points, ``max(64, 2n)`` first and then as many again at each round,
    until ``n`` valid distinct points survive the predicates or ``max_raw`` raw points were
    drawn; the result is the first ``n`` valid distinct points of the sequence, whatever
    the chunking, and memory stays bounded on tightly constrained spaces. ``lhs`` designs
    cannot be extended, so they are redrawn larger instead.

    Sparse spaces: when plain filtering would need more than ``max_raw`` raw points on
    average (``n`` over the valid fraction), the points are drawn in the reduced cube of
    the space's :class:`~gpautotune.space._plan.SamplingPlan` instead (constrained groups
    enumerated, one coordinate each), where few or none are invalid. Filtering that
    still ends short is topped up the same way. Elsewhere the sequence is plain
    FILTER_SOBOL, unchanged.

    When fewer than ``n`` exist in ``max_raw`` raw points, ``strict`` raises a
    :class:`SpaceError`; otherwise the ones found are returned (candidate pools of spaces
    whose valid fraction is tiny).
    """
    if method not in METHODS:
        raise SpaceError(f"unknown sampling method {method!r}; choose one of {list(METHODS)}")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise SpaceError(f"the number of samples must be a non-negative integer, got {n!r}")
    if n == 0:
        return np.empty((0, space.dims))
    plan = space.sampling_plan
    if plan.empty:
        if strict:
            raise SpaceError(
                "the constraints admit no configuration (check them with `gpautotune space`)"
            )
        return np.empty((0, space.dims))
    grouped = _Draws(space, method, seed, max_raw, plan.reduced_dims, plan.decode)
    if plan.useful and plan.expected_raw(n) > max_raw:
        index, raw = grouped.take(n)
    else:
        index, raw = _Draws(space, method, seed, max_raw, space.dims, space.from_unit).take(n)
        if len(index) < n and plan.useful:
            more, extra = grouped.take(n)
            index, raw = _merge(space, index, more)[:n], raw + extra
    if len(index) >= n:
        return index[:n]
    if strict:
        raise SpaceError(
            f"only {len(index)} distinct valid configurations in {raw} raw {method} points, "
            f"{n} wanted: the constraints admit too few (check them with `gpautotune space`)"
        )
    return index


def filter_index(
    space, n: int, *, method: str = "sobol", seed: int | None = None, max_raw: int = MAX_RAW
) -> tuple[np.ndarray, int]:
    """Plain filtering, without constraint groups: the first ``n`` valid distinct rows of
    one sequence within ``max_raw`` raw points (fewer if there are not enough), and the
    number of raw points drawn."""
    return _Draws(space, method, seed, max_raw, space.dims, space.from_unit).take(n)


CHUNK = 1 << 16
Decode = Callable[[np.ndarray], np.ndarray]


def _merge(space, index: np.ndarray, more: np.ndarray) -> np.ndarray:
    """``index`` followed by the rows of ``more`` it does not hold."""
    if not len(more):
        return index
    fresh = ~np.isin(space.row_keys(more), space.row_keys(index)) if len(index) else slice(None)
    return np.concatenate([index, more[fresh]])


@dataclass(frozen=True)
class _Draws:
    """Raw points of one seeded design in a ``dims``-cube, decoded to index rows."""

    space: Any
    method: str
    seed: int | None
    max_raw: int
    dims: int
    decode: Decode

    def take(self, n: int) -> tuple[np.ndarray, int]:
        """Valid distinct rows (up to ``n``) and the raw points drawn for them."""
        first = max(64, 2 * int(n))
        return self._lhs(n, first) if self.method == "lhs" else self._sequence(n, first)

    def _sequence(self, n: int, first: int) -> tuple[np.ndarray, int]:
        """The first ``n`` valid distinct points of one Sobol or random sequence."""
        space, dims = self.space, self.dims
        if self.method == "sobol":
            from scipy.stats import qmc

            engine = qmc.Sobol(dims, scramble=True, seed=self.seed)
            first = 1 << max(int(math.ceil(math.log2(first))), 0)

            def draw(k: int) -> np.ndarray:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    return engine.random(k)
        else:
            rng = np.random.default_rng(self.seed)

            def draw(k: int) -> np.ndarray:
                return rng.random((k, dims))

        found: list[np.ndarray] = []
        keys: set = set()
        count = drawn = 0
        target = min(first, self.max_raw)
        while True:
            while drawn < target and count < n:
                u = draw(min(CHUNK, target - drawn))
                drawn += len(u)
                index = self.decode(u)
                index = space.unique_rows(index[space.valid_mask(index)])
                if len(index):
                    row_keys = space.row_keys(index)
                    new = np.array([k not in keys for k in row_keys.tolist()], dtype=bool)
                    keys.update(row_keys[new].tolist())
                    found.append(index[new])
                    count += int(new.sum())
            if count >= n or drawn >= self.max_raw:
                break
            target = min(2 * drawn, self.max_raw)
        index = np.concatenate(found) if found else np.empty((0, space.dims))
        return index, drawn

    def _lhs(self, n: int, first: int) -> tuple[np.ndarray, int]:
        """``n`` valid distinct points of a Latin hypercube, redrawn larger until enough
        survive (grown by the observed valid fraction, at least doubled)."""
        raw = min(first, self.max_raw)
        while True:
            index = self.decode(unit_sample("lhs", self.dims, raw, self.seed))
            index = self.space.unique_rows(index[self.space.valid_mask(index)])
            if len(index) >= n or raw >= self.max_raw:
                return index, raw
            grow = (
                2
                if len(index) == 0
                else max(2, int(2 ** math.ceil(math.log2(n / len(index) * 1.2))))
            )
            raw = min(raw * grow, self.max_raw)
