"""Slices of a space with some parameters fixed, and uniform valid points in them.

The model-based strategies (lm, qr, dlmt, two-stage) and the local searches need the
valid configurations of a slice ``{x : x_j = l_j for j in fixed}``: all of them when the
slice is small enough to enumerate (the seeds score their models over every valid
point), otherwise a uniform sample obtained by rejection (raw points of the free
factors, filtered by the predicates).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from gpautotune.space import Space

__all__ = ["Subspace", "ENUMERATION_LIMIT"]

#: Largest raw slice (product of the free factors' level counts) enumerated.
ENUMERATION_LIMIT = 2_000_000
_MAX_RAW_DRAWS = 1 << 22
_VALID_CACHE: weakref.WeakKeyDictionary[Space, np.ndarray] = weakref.WeakKeyDictionary()


def _all_valid(space: Space) -> np.ndarray:
    """Every valid configuration of an enumerable space, computed once per space."""
    cached = _VALID_CACHE.get(space)
    if cached is None:
        cached = space.enumerate_index()
        cached.setflags(write=False)
        _VALID_CACHE[space] = cached
    return cached


@dataclass(frozen=True)
class Subspace:
    """The valid configurations of ``space`` whose columns ``fixed`` hold given levels.

    Args:
        space: the search space.
        fixed: column position -> level index (an index-matrix value).
    """

    space: Space
    fixed: Mapping[int, float] = field(default_factory=dict)

    @property
    def free(self) -> list[int]:
        """Column positions that are not fixed."""
        return [j for j in range(self.space.dims) if j not in self.fixed]

    @property
    def free_names(self) -> list[str]:
        return [self.space.names[j] for j in self.free]

    def fix(self, levels: Mapping[int, float]) -> Subspace:
        """A narrower slice: these columns fixed too."""
        return Subspace(self.space, {**self.fixed, **{int(j): float(v) for j, v in levels.items()}})

    def contains(self, index: np.ndarray) -> np.ndarray:
        """Mask of rows of an index matrix that lie in the slice (validity not checked)."""
        index = np.atleast_2d(index)
        mask = np.ones(len(index), dtype=bool)
        for j, level in self.fixed.items():
            mask &= index[:, j] == level
        return mask

    @property
    def raw_size(self) -> float:
        """Product of the free factors' level counts (``inf`` with a free real factor)."""
        params = [self.space.parameters[j] for j in self.free]
        if not all(p.is_discrete for p in params):
            return math.inf
        return float(math.prod(p.n_levels for p in params))

    @property
    def enumerable(self) -> bool:
        return self.raw_size <= ENUMERATION_LIMIT or (
            self.space.is_discrete and self.space.size <= ENUMERATION_LIMIT
        )

    def enumerate(self) -> np.ndarray:
        """Index matrix of every valid configuration in the slice (requires :attr:`enumerable`)."""
        space = self.space
        if space.is_discrete and space.size <= ENUMERATION_LIMIT:
            valid = _all_valid(space)
            return valid[self.contains(valid)]
        free = self.free
        shape = tuple(space.parameters[j].n_levels for j in free)
        flat = np.arange(int(self.raw_size))
        index = np.empty((len(flat), space.dims))
        index[:, free] = (
            np.stack(np.unravel_index(flat, shape), axis=1) if free else np.empty((len(flat), 0))
        )
        for j, level in self.fixed.items():
            index[:, j] = level
        return index[space.valid_mask(index)]

    def sample(
        self, n: int, rng: np.random.Generator, exclude: Collection[object] = ()
    ) -> np.ndarray:
        """Up to ``n`` distinct valid configurations of the slice, uniformly at random,
        whose row keys are not in ``exclude`` (fewer when the slice has fewer)."""
        if n <= 0:
            return np.empty((0, self.space.dims))
        if self.enumerable:
            pool = self.enumerate()
            if exclude:
                pool = pool[~_in(self.space.row_keys(pool), exclude)]
            take = rng.permutation(len(pool))[:n]
            return pool[take]
        return self._reject(n, rng, exclude)

    def _reject(self, n: int, rng: np.random.Generator, exclude: Collection[object]) -> np.ndarray:
        space, free = self.space, self.free
        picked: list[np.ndarray] = []
        keys: set[object] = set()
        batch, drawn = max(256, 4 * n), 0
        while len(keys) < n and drawn < _MAX_RAW_DRAWS:
            raw = np.empty((batch, space.dims))
            raw[:, free] = space.from_unit(_pad(rng.random((batch, len(free))), free, space.dims))[
                :, free
            ]
            for j, level in self.fixed.items():
                raw[:, j] = level
            raw = raw[space.valid_mask(raw)]
            for row, key in zip(raw, space.row_keys(raw).tolist(), strict=True):
                if key not in keys and key not in exclude:
                    keys.add(key)
                    picked.append(row)
                    if len(keys) == n:
                        break
            drawn += batch
            batch = min(batch * 2, 1 << 16)
        return np.asarray(picked).reshape(-1, space.dims)

    def candidates(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Every valid configuration when enumerable, else a uniform sample of ``n``."""
        return self.enumerate() if self.enumerable else self._reject(n, rng, ())


def _pad(u: np.ndarray, free: list[int], dims: int) -> np.ndarray:
    out = np.zeros((len(u), dims))
    out[:, free] = u
    return out


def _in(keys: np.ndarray, exclude: Collection[object]) -> np.ndarray:
    return np.fromiter((k in exclude for k in keys.tolist()), dtype=bool, count=len(keys))
