"""Simulated annealing (SA) over the distance-one neighbourhood."""

from __future__ import annotations

import math

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace

__all__ = ["SimulatedAnnealing"]


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

    Args:
        temperature: initial temperature ``T_0``.
        cooling: geometric cooling factor per step, in (0, 1].
        radius: neighbourhood radius in levels.
    """

    def __init__(
        self,
        space: Space,
        *,
        seed: int | None = None,
        temperature: float = 1.0,
        cooling: float = 0.95,
        radius: int = 1,
    ) -> None:
        if temperature <= 0 or not 0 < cooling <= 1 or radius < 1:
            raise ConfigError(
                f"annealing: need temperature > 0, 0 < cooling <= 1 and radius >= 1; got "
                f"temperature={temperature}, cooling={cooling}, radius={radius}"
            )
        super().__init__(space, seed=seed)
        self.temperature, self.cooling, self.radius = (
            float(temperature),
            float(cooling),
            int(radius),
        )
        self._current: np.ndarray | None = None
        self._candidate: np.ndarray | None = None
        self._steps = 0

    def settings(self) -> dict[str, float]:
        return {"temperature": self.temperature, "cooling": self.cooling, "radius": self.radius}

    def _step(self) -> np.ndarray | None:
        if self._candidate is not None:
            self._decide(self._candidate)
            self._candidate = None
        if self._current is None or self._current_value() is None:
            return self._restart()
        fresh = [
            row
            for row in self.space.neighbor_index(self._current, self.radius)
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
        temperature = self.temperature * self.cooling**self._steps
        delta = (new - old) / scale
        if delta <= 0 or self.rng.random() < math.exp(-delta / max(temperature, 1e-300)):
            self._current = candidate
