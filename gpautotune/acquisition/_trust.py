"""A TuRBO-style trust region that the candidate pool is restricted to (``trust_region``).

Eriksson et al. (2019), "Scalable global optimization via local Bayesian optimization":
the candidates lie in a box around the best configuration, of side ``length`` in the unit
box of the parameters; ``success`` improving measurements in a row double the side (up to
``length_max``), ``failure`` measurements without one halve it, and a side below
``length_min`` starts again at ``length_init`` (TuRBO restarts its run there; here the
GP keeps its data, and only the box is reset). BoTorch's TuRBO tutorial updates such a
state object after each batch; here the side is replayed from the measured values at every
step, so that a resumed run, or a batch fitted to earlier trials, sees the same box, and
the strategy keeps no state that its trials do not hold. The box is not weighted by the
length-scales as TuRBO's is: with derived inputs the kernel's columns are not the
parameters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpautotune.exceptions import ConfigError

__all__ = ["TrustRegion"]


@dataclass(frozen=True)
class TrustRegion:
    """The trust region's rules (TuRBO's defaults but ``failure``, its ``max(4, d)``).

    Attributes:
        failure: measurements without an improvement that halve the side.
        success: improving measurements in a row that double it.
        length_init: the side at the start and after a restart.
        length_min: below this side the box starts again.
        length_max: the largest side.
        tolerance: an improvement beats the best by more than this share of it.
    """

    failure: int
    success: int = 3
    length_init: float = 0.8
    length_min: float = 0.5**7
    length_max: float = 1.6
    tolerance: float = 1e-3

    def __post_init__(self) -> None:
        """Refuse rules that never change the box (``failure=0``) or make no box.

        Raises:
            ConfigError: naming the rule.
        """
        counts = (self.failure, self.success)
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in counts):
            raise ConfigError(
                f"TrustRegion: failure and success are counts >= 1, got {self.failure!r}, "
                f"{self.success!r}"
            )
        if not (0 < self.length_min <= self.length_init <= self.length_max < math.inf):
            raise ConfigError(
                "TrustRegion: need 0 < length_min <= length_init <= length_max, got "
                f"{self.length_min}, {self.length_init}, {self.length_max}"
            )
        if not 0 <= self.tolerance < math.inf:
            raise ConfigError(f"TrustRegion: tolerance must be >= 0, got {self.tolerance!r}")

    @classmethod
    def for_dims(cls, dims: int) -> TrustRegion:
        """TuRBO's rules for a ``dims``-parameter space, one measurement per step."""
        return cls(failure=max(4, dims))

    def length(self, values: Sequence[float | None], start: int) -> float:
        """The side after the measurements ``values[start:]`` (None: a failed one), the
        best of ``values[:start]`` (the initial design) being the first to beat."""
        finite = [v for v in values[:start] if v is not None and math.isfinite(v)]
        best = min(finite, default=math.inf)
        side, wins, misses = self.length_init, 0, 0
        for v in values[start:]:
            improved = v is not None and v < best - self.tolerance * abs(best)
            wins, misses = (wins + 1, 0) if improved else (0, misses + 1)
            if v is not None and math.isfinite(v):
                best = min(best, v)
            if wins == self.success:
                side, wins = min(2 * side, self.length_max), 0
            if misses == self.failure:
                side, misses = side / 2, 0
            if side < self.length_min:
                side = self.length_init
        return side

    @staticmethod
    def inside(positions: np.ndarray, center: np.ndarray, side: float) -> np.ndarray:
        """A mask of the rows of ``positions`` (unit box) in the box of ``side`` around
        ``center``."""
        return (np.abs(positions - center) <= side / 2 + 1e-12).all(axis=1)
