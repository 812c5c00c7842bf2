"""Expressions over named values: sizes, tuning parameters, argument arrays, run time.

Everything a kernel file computes (shapes, work sizes, ``#define`` values, metrics,
reference answers) is an expression of :func:`gpautotune.space.compile_expression`:
parsed against a whitelist, never passed to ``eval``. Reference answers may also call
the array functions of :data:`ARRAY_FUNCTIONS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError, PredicateError
from gpautotune.space import Expression, compile_expression

__all__ = ["ARRAY_FUNCTIONS", "compile_value", "evaluate", "integer"]


def _correlate2d(image: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each output point the sum of ``weights`` times the image window at it: the
    "valid" 2-D cross-correlation an image filter computes (the output is smaller than
    the image by the filter's size less one in each axis; SciPy picks direct or FFT)."""
    from scipy import signal  # imported when an answer calls it (a slow import)

    return signal.correlate(image, weights, mode="valid")


#: Functions reference-answer expressions may call, beyond the arithmetic ones.
ARRAY_FUNCTIONS = {
    "matmul": (np.matmul, 2),
    "transpose": (np.transpose, 1),
    "sqrt": (np.sqrt, 1),
    "exp": (np.exp, 1),
    "correlate2d": (_correlate2d, 2),
}


def compile_value(
    text: str | int | float, names: Any, key: str, *, arrays: bool = False
) -> Expression:
    """Compile ``text`` (a number is its own expression) over ``names``.

    Raises:
        ConfigError: the expression does not parse or names something unknown (the
            message starts with ``key``).
    """
    try:
        return compile_expression(str(text), names, ARRAY_FUNCTIONS if arrays else None)
    except PredicateError as exc:
        raise ConfigError(f"{key}: {exc}") from None


def evaluate(expression: Expression, values: Mapping[str, Any]) -> Any:
    """The value of ``expression`` given ``values`` (scalars or arrays)."""
    return expression({k: np.asarray(v) for k, v in values.items() if k in expression.names})


def integer(expression: Expression, values: Mapping[str, Any], key: str) -> int:
    """An expression that must give a whole number (a size, a work size, a shape).

    Raises:
        ConfigError: the value is not a finite whole number.
    """
    value = np.asarray(evaluate(expression, values))
    if value.size != 1 or not np.isfinite(value).all() or float(value) != int(value):
        raise ConfigError(f"{key}: {expression.text!r} gives {value!r}, not a whole number")
    return int(value)
