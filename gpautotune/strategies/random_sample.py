"""Uniform random sampling of valid configurations without replacement (RS)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from gpautotune.space import DEFAULT_ENUMERATION_LIMIT
from gpautotune.strategies._registry import register
from gpautotune.strategies._stream import StreamStrategy

__all__ = ["RandomSampling"]

_BATCH = 4096


@register("random")
class RandomSampling(StreamStrategy):
    """Uniform sampling without replacement.

    Enumerable spaces are shuffled once (a seeded permutation of the valid set);
    larger ones are sampled by rejection: uniform raw points filtered by the
    predicates, which is uniform over the valid set.
    """

    def _stream(self) -> Iterator[np.ndarray]:
        space = self.space
        if space.is_enumerable(DEFAULT_ENUMERATION_LIMIT) and space.size <= 5_000_000:
            valid = space.enumerate_index()
            yield valid[np.random.default_rng(self.seed).permutation(len(valid))]
            return
        batch = 0
        while True:
            rng = np.random.default_rng([0 if self.seed is None else self.seed, batch])
            yield space.from_unit(rng.random((_BATCH, space.dims)))
            batch += 1
