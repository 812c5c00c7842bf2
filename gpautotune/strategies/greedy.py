"""Greedy local search (GS): steepest descent over the distance-one neighbourhood."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import PositiveInt

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace

__all__ = ["GreedySearch", "GreedySettings"]


@strategy_settings
class GreedySettings(StrategySettings):
    """Options of :class:`GreedySearch` and of greedy search with restarts.

    Attributes:
        radius: neighbourhood radius in levels.
        moved_ignores: parameters left out when the search checks whether its best
            neighbour is a new point: a move that changes only these parameters ends the
            descent as a local optimum would. Seed 000's GS scripts compared points
            without ``lws_y`` (``point_equal`` in ``gr_bench.R``), so that a step along
            ``lws_y`` alone stopped them; ``[lws_y]`` reproduces their heavy tail on the
            Laplacian (docs/benchmarks/baselines.md).
        step: what a neighbour differs by: ``level`` (±1..``radius`` levels of one
            factor) or ``value`` (±1..``radius`` in one numeric factor's *value*, the
            hypothesis tested for the seeds' GS: a power-of-two factor then never moves;
            factors whose values are not numbers move by levels).
    """

    KEY_OMITS_DEFAULTS = ("moved_ignores", "step")

    radius: PositiveInt = 1
    moved_ignores: tuple[str, ...] = ()
    step: Literal["level", "value"] = "level"


@register("greedy")
class GreedySearch(StepwiseStrategy):
    """Greedy search of seed 000 §6 (GS).

    From a uniformly random valid start, measure every valid neighbour (configurations
    that differ by ±1..``radius`` levels in one factor, ``Space.neighbor_index``) and
    move to the best one if it improves on the current point; stop at a local optimum,
    usually well before the budget is spent (22 points on average in the seeds). A start
    that fails to evaluate is replaced by another random start.

    The options are the fields of :class:`GreedySettings`.
    """

    #: Whether a local optimum triggers a new random start (GSR) instead of stopping.
    restart: bool = False

    Settings = GreedySettings
    options: GreedySettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._current: np.ndarray | None = None
        self._starting = False
        self.starts = 0
        unknown = sorted(set(self.options.moved_ignores) - set(space.names))
        if unknown:
            raise ConfigError(
                f"moved_ignores names {unknown}, not parameters of the space {space.names}"
            )
        self._compared = np.array([n not in self.options.moved_ignores for n in space.names])

    def _info(self) -> dict[str, object]:
        return {"start": self.starts, "phase": "start" if self._starting else "neighbours"}

    def _step(self) -> np.ndarray | None:
        if self._current is None:
            return self._new_start()
        current_value = self.value(self.keys(self._current[None, :])[0])
        if self._starting:
            self._starting = False
            if current_value is None:
                return self._new_start()
            return self._neighbours()
        moved = self._best_neighbour(current_value)
        if moved is not None:
            still = np.array_equal(moved[self._compared], self._current[self._compared])
            self._current = moved
            if not still:
                return self._neighbours()
        if not self.restart:
            return None
        return self._new_start()

    def _new_start(self) -> np.ndarray | None:
        start = Subspace(self.space).sample(1, self.rng, exclude=self.history)
        if len(start) == 0:
            return None
        self._current, self._starting = start[0], True
        self.starts += 1
        return start

    def _neighbours(self) -> np.ndarray:
        if self.options.step == "level":
            return self.space.neighbor_index(self._current, self.options.radius)
        return self._value_neighbours()

    def _value_neighbours(self) -> np.ndarray:
        """Valid configurations whose value in one factor is the current one ±1..radius
        (a radius past the factor's range of values adds nothing, and is not walked)."""
        rows = []
        for j, p in enumerate(self.space.parameters):
            levels = np.arange(p.n_levels)
            try:
                values = np.asarray(p.values_at(levels), dtype=float)
            except (TypeError, ValueError):  # not numbers: step by levels
                values = levels.astype(float)
            here = values[int(self._current[j])]
            spread = float(np.ptp(values))  # no value is further away
            radius = self.options.radius
            reach = min(radius, int(spread) + 1) if math.isfinite(spread) else radius
            for distance in range(1, reach + 1):
                for sign in (-1.0, 1.0):
                    hit = np.flatnonzero(values == here + sign * distance)
                    if len(hit):
                        row = self._current.copy()
                        row[j] = hit[0]
                        rows.append(row)
        found = np.asarray(rows, dtype=float).reshape(-1, self.space.dims)
        return found[self.space.valid_mask(found)] if len(found) else found

    def _best_neighbour(self, current_value: float) -> np.ndarray | None:
        rows = self._neighbours()
        values = [self.value(k) for k in self.keys(rows)]
        scored = [(v, i) for i, v in enumerate(values) if v is not None]
        if not scored:
            return None
        best_value, best = min(scored)
        return rows[best] if best_value < current_value else None
