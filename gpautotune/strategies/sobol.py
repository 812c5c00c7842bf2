"""Scrambled Sobol points, filtered by the predicates, in sequence order."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
from scipy.stats import qmc

from gpautotune.strategies._registry import register
from gpautotune.strategies._stream import StreamStrategy

__all__ = ["SobolSampling"]

_MAX_POINTS = 1 << 26


@register("sobol")
class SobolSampling(StreamStrategy):
    """The constrained Sobol sequence (FILTER_SOBOL order), one point after another."""

    def _stream(self) -> Iterator[np.ndarray]:
        engine = qmc.Sobol(self.space.dims, scramble=True, seed=self.seed)
        size, drawn = 256, 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            while drawn < _MAX_POINTS:
                yield self.space.from_unit(engine.random(size))
                drawn += size
                size = min(size * 2, 1 << 16)
