"""Where a GPR escape step looks: the moves around the best configuration.

After ``stall`` measurements without a new best, a GPR step *escapes*
(:class:`gpautotune.strategies.gpr.GPRStrategy`): it polls the unmeasured one-parameter
moves of the best configuration, the parameters taken in turn, or (``escape="far"``,
``"coverage"``) every second time looks elsewhere in the pool. The geometry of those
choices depends on the space and the measured configurations only, not on the model, so
it lives here, as functions of index rows (:meth:`Space.to_index`):

* :func:`one_parameter_moves` — the poll's moves (every level of each parameter);
* :func:`nearest_levels` — of them, the nearest level on each side (``poll_levels``);
* :func:`polled_counts` — how often earlier escapes polled each parameter (the rotation);
* :func:`far_from_best`, :func:`least_covered` — the pool rows an alternate escape keeps.

Nothing here is fitted or drawn at random, so the strategy's state stays a function of
its trials.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numpy as np

from gpautotune.space import Categorical, Space

__all__ = [
    "far_from_best",
    "least_covered",
    "nearest_levels",
    "one_parameter_moves",
    "polled_counts",
]

#: The fewest 5% steps a real parameter's moves take across its range.
REAL_STEPS = 20


def one_parameter_moves(space: Space, row: np.ndarray) -> np.ndarray:
    """The valid configurations one parameter away from the index ``row``, each once:
    every level of a discrete parameter, real ones in 5% steps across the range."""
    levels = [p.n_levels - 1 for p in space.parameters if p.is_discrete]
    moves = space.neighbor_index(row, max([*levels, REAL_STEPS]))
    if len(moves):
        _, first = np.unique(space.row_keys(moves), return_index=True)
        moves = moves[np.sort(first)]
    return moves


def nearest_levels(space: Space, moves: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Of the one-parameter ``moves`` of the index ``row``, those along an ordered
    discrete parameter that are the nearest to its level on their side (below or above),
    and every move along another parameter (categorical or real)."""
    along = np.argmax(moves != row, axis=1)
    offset = moves[np.arange(len(moves)), along] - row[along]
    ordered = np.array([p.is_discrete and not isinstance(p, Categorical) for p in space.parameters])
    keep = ~ordered[along]
    side = 2 * along + (offset > 0)
    for s in np.unique(side[ordered[along]]):
        mask = side == s
        keep |= mask & (np.abs(offset) == np.abs(offset[mask]).min())
    return moves[keep]


def polled_counts(space: Space, escapes: Iterable[tuple[dict, dict]]) -> np.ndarray:
    """How often the ``escapes`` polled each parameter: each escape a pair (the
    configuration it measured, the best one it moved from), counted where the two differ
    in exactly one parameter."""
    polled = np.zeros(space.dims, dtype=int)
    for measured, best in escapes:
        rows = space.to_index([measured, best])
        changed = np.flatnonzero(rows[0] != rows[1])
        polled[changed] += len(changed) == 1
    return polled


def far_from_best(space: Space, rows: np.ndarray, best: np.ndarray) -> np.ndarray:
    """A mask of the ``rows`` that differ from the index row ``best`` in at least half of
    the parameters."""
    return (rows != best).sum(axis=1) >= (space.dims + 1) // 2


def least_covered(
    space: Space, rows: np.ndarray, measured: np.ndarray, sample: np.ndarray
) -> np.ndarray:
    """A mask of the ``rows`` in the *cell* (two discrete parameters at one level each)
    that the ``measured`` index rows cover least against its share of the space: the
    largest shortfall of measurements from that share, the share read from a
    space-filling ``sample`` (from ``rows`` where it is empty). Every row where no cell
    falls short."""
    sample = sample if len(sample) else rows
    discrete = [j for j, p in enumerate(space.parameters) if p.is_discrete]
    best, keep = 0.0, np.ones(len(rows), dtype=bool)
    for a, b in itertools.combinations(discrete, 2):
        width = space.parameters[b].n_levels
        cells = (rows[:, a] * width + rows[:, b]).astype(int)
        drawn = (sample[:, a] * width + sample[:, b]).astype(int)
        seen = (measured[:, a] * width + measured[:, b]).astype(int)
        size = space.parameters[a].n_levels * width
        share = np.bincount(drawn, minlength=size) / len(sample)
        shortfall = len(measured) * share - np.bincount(seen, minlength=size)
        shortfall[np.bincount(cells, minlength=size) == 0] = -np.inf  # nothing to pick
        cell = int(np.argmax(shortfall))
        if shortfall[cell] > best:
            best, keep = float(shortfall[cell]), cells == cell
    return keep
