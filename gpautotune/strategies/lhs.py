"""Latin hypercube sampling (LHS), rounded to levels and filtered by the predicates."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import PositiveInt
from scipy.stats import qmc

from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy

__all__ = ["LatinHypercube", "LHSSettings"]

_PILOT = 1 << 14
_MAX_RAW = 1 << 21


@strategy_settings
class LHSSettings(StrategySettings):
    """Options of :class:`LatinHypercube`.

    Attributes:
        samples: the expected number of valid, distinct points of the design.
    """

    samples: PositiveInt = 100


@register("lhs")
class LatinHypercube(StepwiseStrategy):
    """One Latin hypercube design, measured point after point (seed 000 §6, 003 §11.5).

    A Latin hypercube of ``m`` points in the encoded unit cube ``[0, 1]^d`` (scipy's
    ``qmc.LatinHypercube``) is rounded to the nearest levels (``Space.snap``); invalid
    points and duplicates are dropped and the survivors are measured in design order,
    after which the strategy stops. A constrained space rejects most raw points, so the
    design is sized for about ``samples`` survivors: ``m = ceil(samples / f)``, with
    ``f`` the fraction of rounded uniform points that are valid (estimated once on a
    fixed pilot sample). The number measured therefore varies from run to run around
    ``samples`` (the budget caps it): the seeds' LHS measured 98.9 points on average
    (at most 125, its budget).

    The options are the fields of :class:`LHSSettings`.
    """

    Settings = LHSSettings
    options: LHSSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._done = False

    def valid_fraction(self) -> float:
        """Fraction of uniform points of the encoded cube that round to a valid configuration."""
        pilot = np.random.default_rng(0).random((_PILOT, self.space.dims))
        return float(self.space.valid_mask(self.space.snap(pilot)).mean())

    def _step(self) -> np.ndarray | None:
        if self._done:
            return None
        self._done = True
        fraction = self.valid_fraction()
        raw = min(_MAX_RAW, math.ceil(self.options.samples / max(fraction, 1.0 / _PILOT)))
        index = self.space.snap(qmc.LatinHypercube(self.space.dims, seed=self.rng).random(raw))
        return self.space.unique_rows(index[self.space.valid_mask(index)])
