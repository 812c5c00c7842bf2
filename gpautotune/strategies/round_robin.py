"""HAQ's round-robin rule for meeting a size limit (Wang et al. 2019, seed 003 §13.4.3).

Start with every parameter at its highest level (8 bits everywhere) and lower one level
at a time, first parameter first, then the next, cycling round-robin (skipping those at
their lowest level), until the configuration satisfies the space's predicates.
"""

from __future__ import annotations

import numpy as np

from gpautotune.space import Space
from gpautotune.strategies._base import Proposal, Strategy
from gpautotune.strategies._registry import register

__all__ = ["RoundRobin", "round_robin_index", "round_robin_walk"]


def round_robin_walk(space: Space) -> np.ndarray:
    """Every configuration of the walk, in order, as index rows (start included)."""
    row = np.array([p.n_levels - 1 for p in space.parameters], dtype=float)
    rows = [row.copy()]
    j = 0
    while row.any():
        if row[j] > 0:
            row[j] -= 1
            rows.append(row.copy())
        j = (j + 1) % space.dims
    return np.asarray(rows)


def round_robin_index(space: Space) -> np.ndarray:
    """The first valid configuration of the walk, shape ``(1, d)``; ``(0, d)`` if none."""
    walk = round_robin_walk(space)
    valid = np.flatnonzero(space.valid_mask(walk))
    return walk[valid[:1]]


@register("round-robin")
class RoundRobin(Strategy):
    """Deterministic: proposes the round-robin configuration once, then stops."""

    def _propose(self, n: int) -> list[Proposal]:
        index = round_robin_index(self.space)
        index = index[~self.is_seen(index)]
        return self.proposals(index, source=self.name)
