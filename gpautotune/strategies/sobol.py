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
        while drawn < _MAX_POINTS:
            # the filter only around the draw: one held open across ``yield`` would hide
            # every UserWarning of the caller's process until the generator is collected
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # balance of 2^m draws
                points = engine.random(size)
            yield self.space.from_unit(points)
            drawn += size
            size = min(size * 2, 1 << 16)
