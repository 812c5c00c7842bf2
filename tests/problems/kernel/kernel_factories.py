"""Array factories and answer functions that test files name as ``module:function``
(importable as ``tests.problems.kernel.kernel_factories``)."""

from __future__ import annotations

import numpy as np


def ramp(n: int) -> np.ndarray:
    """0, 1, ..., n-1 as float32."""
    return np.arange(n, dtype=np.float32)


def doubled(arguments: list) -> list:
    """The answer of ``out = 2 * x`` for arguments ``[out, x, n]``."""
    return [2 * arguments[1], None, None]
