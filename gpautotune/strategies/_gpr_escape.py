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
* :func:`far_from_best`, :func:`least_covered` — the pool rows an alternate escape keeps;
* :class:`EscapePolls` — a run's escape steps and the moves each polls, from these.

Nothing here is fitted, and the wider moves' sample is seeded by the run's seed and
length, so the strategy's state stays a function of its trials.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from gpautotune.space import Categorical, Space
from gpautotune.trial import Trial

__all__ = [
    "EscapePolls",
    "best_of",
    "far_from_best",
    "least_covered",
    "nearest_levels",
    "one_parameter_moves",
    "polled_counts",
]

#: The fewest 5% steps a real parameter's moves take across its range.
REAL_STEPS = 20

#: Most two-parameter or adjacent moves a completed poll looks at (``poll_pairs``,
#: ``poll_adjacent``); a seeded sample of them beyond, so that a space of many parameters
#: with many levels stays cheap.
WIDER_MOVES_MAX = 20_000

#: The escapes that poll along the parameters polled least often since the best.
ROTATING = ("rotate", "far", "coverage")


def best_of(trials: Sequence[Trial]) -> Trial | None:
    """The best successful trial of ``trials`` (None when none succeeded)."""
    return min((t for t in trials if t.ok), key=lambda t: t.value, default=None)


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


class EscapePolls:
    """A run's escape steps and the moves each one polls (``escape``, ``poll_levels``,
    ``poll_pairs``, ``poll_adjacent`` of :class:`GPRSettings`).

    An escape polls the unmeasured one-parameter moves of the best configuration; with
    ``escape`` ``"rotate"``, ``"far"``, ``"coverage"`` or ``"cycle"`` only along the
    parameters polled least often; with ``"far"`` or ``"coverage"`` every second escape
    looks in the pool instead (:meth:`far`, :meth:`alternate_rows`).

    Args:
        space: the search space.
        seed: the run's seed (the wider moves' sample).
        escape, levels, pairs, adjacent: the settings named above.
    """

    def __init__(
        self,
        space: Space,
        seed: int | None,
        *,
        escape: str = "rotate",
        levels: str = "any",
        pairs: bool = False,
        adjacent: bool = False,
    ) -> None:
        self.space, self.seed = space, seed
        self.escape, self.levels, self.pairs, self.adjacent = escape, levels, pairs, adjacent
        #: Positions (in the run's trials) of the trials that opened an escape step.
        self.positions: list[int] = []

    def far(self, step: int) -> bool:
        """With ``escape="far"`` (or ``"coverage"``), whether the escape step at ``step``
        trials looks far from the best configuration (or in the least measured cell):
        every second escape (the others poll as ``rotate``)."""
        if self.escape not in ("far", "coverage"):
            return False
        return sum(i < step for i in self.positions) % 2 == 1

    def alternate_rows(
        self, rows: np.ndarray, sources: np.ndarray, trials: Sequence[Trial]
    ) -> np.ndarray:
        """A mask of the pool's ``rows`` an alternate escape (:meth:`far`) picks among:
        far from the best of ``trials`` with ``escape="far"``, else in the least measured
        cell."""
        if self.escape == "far":
            best = self.space.to_index([best_of(trials).config])[0]
            return far_from_best(self.space, rows, best)
        measured = self.space.to_index([t.config for t in trials])
        return least_covered(self.space, rows, measured, rows[sources == "sample"])

    def moves(
        self, ok: Sequence[Trial], trials: Sequence[Trial], is_seen: Callable
    ) -> tuple[np.ndarray, str]:
        """Unmeasured (``is_seen`` false) valid configurations one parameter away from the
        best of ``ok`` (any level, or the nearest ones as ``poll_levels`` asks:
        :func:`nearest_levels`); with a rotating ``escape`` or ``"cycle"`` only along the
        parameters the escapes among the run's ``trials`` polled least often. Where none
        is left, its pair or adjacent moves as ``poll_pairs`` and ``poll_adjacent`` ask.
        With the moves, the source their picks record: ``poll`` (one or two parameters)
        or ``adjacent``."""
        best = best_of(ok)
        row = self.space.to_index([best.config])[0]
        moves = one_parameter_moves(self.space, row)
        if len(moves):
            moves = moves[~is_seen(moves)]
        if not len(moves):  # a complete poll: wider moves, if asked for, else the pool
            wider = (row, len(trials), is_seen)
            if self.pairs:
                moves = self._wider(self.space.pair_index, *wider, 0x9A12)
            if not len(moves) and self.adjacent:
                return self._wider(self.space.adjacent_index, *wider, 0xAD7), "adjacent"
            return moves, "poll"
        if self._nearest(best, trials):
            moves = nearest_levels(self.space, moves, row)
        if self.escape not in (*ROTATING, "cycle"):
            return moves, "poll"
        along = np.argmax(moves != row, axis=1)  # the one parameter each move changes
        polled = self._polled(best, trials)
        return moves[polled[along] == polled[along].min()], "poll"

    def _wider(
        self, moves_of: Callable, row: np.ndarray, step: int, is_seen: Callable, salt: int
    ) -> np.ndarray:
        """The unmeasured ones of ``moves_of(row, limit, seed)`` (:meth:`Space.pair_index`
        or :meth:`Space.adjacent_index`): from a seeded sample of ``WIDER_MOVES_MAX``
        moves where there are more, the seed the run's, its length ``step`` and ``salt``."""
        moves = moves_of(row, WIDER_MOVES_MAX, (self.seed or 0, step, salt))
        return moves[~is_seen(moves)] if len(moves) else moves

    def _nearest(self, best: Trial, trials: Sequence[Trial]) -> bool:
        """Whether this poll keeps only the nearest levels (``poll_levels``): always with
        ``nearest``; with ``alternate``, on the first, third, ... escape since ``best``;
        with ``alternate_any``, on the second, fourth, ..."""
        if self.levels in ("alternate", "alternate_any"):
            since = len(self.since(best, trials))
            return since % 2 == (0 if self.levels == "alternate" else 1)
        return self.levels == "nearest"

    def since(self, best: Trial, trials: Sequence[Trial]) -> list[int]:
        """The positions of the escape steps' trials made after ``best`` was measured
        (among the run's ``trials``)."""
        found = next((i for i, t in enumerate(trials) if t is best), len(trials))
        return [i for i in self.positions if i > found]

    def _polled(self, best: Trial, trials: Sequence[Trial]) -> np.ndarray:
        """How often the escape steps polled each parameter: with a rotating ``escape``,
        the escapes since ``best`` was found, each a move of one parameter from it; with
        ``"cycle"``, every escape of the run, each a move of one parameter from the best
        configuration measured before it."""
        if self.escape in ROTATING:
            escapes = [(i, best) for i in self.since(best, trials)]
        else:
            escapes = [(i, best_of(trials[:i])) for i in self.positions]
        pairs = ((trials[i].config, then.config) for i, then in escapes if then is not None)
        return polled_counts(self.space, pairs)
