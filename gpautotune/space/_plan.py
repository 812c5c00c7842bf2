"""Sampling plans: sparse spaces sampled per constraint group instead of by rejection.

FILTER_SOBOL (scrambled Sobol points decoded to levels, invalid ones dropped) wastes
``1 - f`` of its draws, ``f`` being the valid fraction; on SPAPT's dgemv3 (f ~ 2e-4)
2^20 raw points hold fewer than 200 valid ones. But constraints usually read few factors
each: the factors split into *groups* that no constraint connects (a tile pair, an
unroll triple), and the valid set is the product of the groups' valid sets. A plan
enumerates each constrained group small enough (its valid combinations, in enumeration
order) and turns it into one *super-factor*: a single unit coordinate ``u`` picks
combination ``floor(u * n_valid)``. Unconstrained factors keep one coordinate each, as
do the factors of groups too large to enumerate, which are still filtered. The design is
a scrambled Sobol (or random, or Latin hypercube) sample in that reduced cube, uniform
over the valid space like FILTER_SOBOL, but without rejection in the enumerated groups.

A plan helps only when some group short of the whole space is enumerated; otherwise
(one group of every factor, e.g. the Laplacian's) sampling stays plain FILTER_SOBOL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpautotune.space._parameters import Parameter

__all__ = ["SamplingPlan", "ENUMERATION_LIMIT"]

#: raw combinations of one constraint group enumerated at most (tensor's unroll group: 2.4e7)
ENUMERATION_LIMIT = 1 << 25
#: valid combinations of one group kept at most (estimated first above _SMALL raw ones)
VALID_LIMIT = 1 << 20
_SMALL = 1 << 16
_FRACTION_SAMPLES = 1 << 16


@dataclass(frozen=True)
class _Group:
    """An enumerated constrained group: its columns and valid combinations (level rows)."""

    columns: tuple[int, ...]
    valid: np.ndarray
    fraction: float


@dataclass(frozen=True)
class SamplingPlan:
    """How to decode points of a reduced unit cube into (mostly valid) index rows.

    Attributes:
        parameters: the full space's parameters.
        single: columns that take one reduced coordinate each (unconstrained factors
            and the factors of groups not enumerated), in order.
        groups: the enumerated constrained groups, one reduced coordinate each, after
            ``single``.
        fraction: the valid fraction of the raw space (exact when every constrained
            group is enumerated, else estimated from uniform samples).
    """

    parameters: tuple[Parameter, ...]
    single: tuple[int, ...]
    groups: tuple[_Group, ...]
    fraction: float

    @property
    def useful(self) -> bool:
        """Whether the plan draws fewer invalid points than plain filtering."""
        return any(g.fraction < 1.0 for g in self.groups)

    @property
    def empty(self) -> bool:
        """Whether some enumerated group, hence the space, has no valid combination."""
        return any(not len(g.valid) for g in self.groups)

    @property
    def reduced_dims(self) -> int:
        return len(self.single) + len(self.groups)

    @classmethod
    def build(cls, space) -> SamplingPlan:
        """The plan of ``space`` (enumerates its constrained groups; cached by the space)."""
        column = {n: j for j, n in enumerate(space.names)}
        groups = space.constraint_groups()
        if len(groups) == 1:
            return cls(space.parameters, tuple(range(space.dims)), (), 1.0)
        single: list[int] = []
        enumerated: list[_Group] = []
        fraction = 1.0
        for g in groups:
            sub = space.restricted(g)
            if not sub.constraints:
                single += [column[n] for n in g]
                continue
            share = None if sub.size <= _SMALL else _estimate(sub)
            if sub.is_enumerable(ENUMERATION_LIMIT) and (share or 0.0) * sub.size <= VALID_LIMIT:
                valid = sub.enumerate_index(ENUMERATION_LIMIT).astype(np.int64)
                share = len(valid) / sub.size
                enumerated.append(_Group(tuple(column[n] for n in g), valid, share))
            else:  # too large to enumerate, or too many valid combinations to keep
                share = _estimate(sub) if share is None else share
                single += [column[n] for n in g]
            fraction *= share
        return cls(space.parameters, tuple(single), tuple(enumerated), fraction)

    def decode(self, u: np.ndarray) -> np.ndarray:
        """Index matrix of points of the reduced cube, shape ``(n, reduced_dims)``."""
        u = np.atleast_2d(u)
        out = np.empty((len(u), len(self.parameters)), dtype=float)
        for k, j in enumerate(self.single):
            out[:, j] = self.parameters[j].from_unit(u[:, k])
        for k, group in enumerate(self.groups, start=len(self.single)):
            pick = np.minimum((u[:, k] * len(group.valid)).astype(np.int64), len(group.valid) - 1)
            out[:, list(group.columns)] = group.valid[pick]
        return out

    def expected_raw(self, n: int) -> float:
        """Raw points plain filtering needs for ``n`` valid ones, on average."""
        return math.inf if self.fraction <= 0 else n / self.fraction


def _estimate(sub) -> float:
    """Valid fraction of a group from uniform samples (a real factor: never enumerated)."""
    return sub.count_valid(samples=_FRACTION_SAMPLES, seed=0, limit=0).fraction
