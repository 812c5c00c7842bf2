"""Simulated annealing (SA) over the distance-one neighbourhood."""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field, PositiveFloat, PositiveInt

from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace

__all__ = ["AnnealingSettings", "SimulatedAnnealing"]


@strategy_settings
class AnnealingSettings(StrategySettings):
    """Options of :class:`SimulatedAnnealing`.

    Attributes:
        temperature: initial temperature ``T_0``.
        cooling: geometric cooling factor per step, in (0, 1].
        radius: neighbourhood radius in levels.
    """

    temperature: PositiveFloat = 1.0
    cooling: Annotated[float, Field(gt=0, le=1)] = 0.95
    radius: PositiveInt = 1


@register("annealing")
class SimulatedAnnealing(StepwiseStrategy):
    """Simulated annealing, one measurement per step (not run in the seeds; common in peers).

    From a uniformly random valid start, each step measures a random valid neighbour
    (±1..``radius`` levels of one factor) not generated before and moves there with the
    Metropolis probability ``min(1, exp(-Delta / T))``. ``Delta`` is the change of the
    objective divided by the standard deviation of the values measured so far (so that
    ``T`` does not depend on the objective's unit), and ``T_k = T_0 * cooling^k`` after
    ``k`` steps. When every neighbour of the current point has been generated, or a start
    fails, the search restarts from a new random point with ``T`` reset to ``T_0``.

    The options are the fields of :class:`AnnealingSettings`.
    """

    Settings = AnnealingSettings
    options: AnnealingSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._current: np.ndarray | None = None
        self._candidate: np.ndarray | None = None
        self._steps = 0

    def _step(self) -> np.ndarray | None:
        if self._candidate is not None:
            self._decide(self._candidate)
            self._candidate = None
        if self._current is None or self._current_value() is None:
            return self._restart()
        fresh = [
            row
            for row in self.space.neighbor_index(self._current, self.options.radius)
            if self.keys(row[None, :])[0] not in self.history
        ]
        if not fresh:
            return self._restart()
        self._candidate = fresh[int(self.rng.integers(len(fresh)))]
        return self._candidate[None, :]

    def _current_value(self) -> float | None:
        return self.value(self.keys(self._current[None, :])[0])

    def _restart(self) -> np.ndarray | None:
        start = Subspace(self.space).sample(1, self.rng, exclude=self.history)
        if len(start) == 0:
            return None
        self._current, self._steps = start[0], 0
        return start

    def _decide(self, candidate: np.ndarray) -> None:
        new = self.value(self.keys(candidate[None, :])[0])
        old = self._current_value()
        self._steps += 1
        if new is None or old is None:
            return
        _, values = self.measured_history()
        scale = (
            float(np.std(values)) if len(values) > 1 and np.std(values) > 0 else max(abs(old), 1.0)
        )
        temperature = self.options.temperature * self.options.cooling**self._steps
        delta = (new - old) / scale
        if delta <= 0 or self.rng.random() < math.exp(-delta / max(temperature, 1e-300)):
            self._current = candidate
