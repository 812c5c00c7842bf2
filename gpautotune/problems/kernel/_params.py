"""Tunable parameters as Kernel Tuner writes them, and the ``#define`` lines of a configuration.

``tune_params`` maps each name to its list of values. Numeric lists become ordered
parameters (powers of two in a row: :class:`PowerOfTwo`; otherwise :class:`Ordinal`,
log2-scaled when the values span a factor of 8 or more), booleans :class:`Boolean`,
anything else :class:`Categorical`; NumPy numbers count as numbers (and are stored as
Python ``int``/``float``). ``restrictions`` are constraint expressions over the names
(one string is one restriction), or functions of the parameters as the space takes them
(:mod:`gpautotune.space`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.space import Boolean, Categorical, Ordinal, Parameter, PowerOfTwo, Space

__all__ = ["space_from_tune_params", "define_lines"]


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _plain(value: Any) -> Any:
    """A NumPy value (``np.int64(32)``, ``np.float32(0.5)``) as the Python value it holds."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    return value.item() if isinstance(value, np.generic) else value


def _parameter(name: str, values: Sequence[Any]) -> Parameter:
    levels = [_plain(v) for v in values]
    if not levels or len(set(map(repr, levels))) != len(levels):
        raise ConfigError(f"tune_params.{name}: give a list of distinct values, got {levels!r}")
    if all(isinstance(v, bool) for v in levels) and len(levels) == 2:
        return Boolean(name)
    if not _numeric(levels):
        return Categorical(name, tuple(levels))
    ordered = sorted(levels)
    if all(isinstance(v, int) and v > 0 and v & (v - 1) == 0 for v in ordered) and all(
        b == 2 * a for a, b in zip(ordered, ordered[1:], strict=False)
    ):
        return PowerOfTwo(name, ordered[0], ordered[-1])
    spread = ordered[0] > 0 and ordered[-1] / ordered[0] >= 8
    return Ordinal(name, tuple(ordered), scale="log2" if spread else "linear")


def _restrictions(restrictions: Any) -> list[str | Callable[..., Any]]:
    """``restrictions`` as a list: one string or one function is one restriction.

    Raises:
        ConfigError: neither a string, a function nor a list of them.
    """
    if isinstance(restrictions, str) or callable(restrictions):
        return [restrictions]
    if isinstance(restrictions, (Sequence, set, frozenset)) and not isinstance(
        restrictions, (bytes, bytearray)
    ):
        return list(restrictions)
    raise ConfigError(
        "restrictions: give a list of expression strings (such as 'block_size_x * "
        f"block_size_y <= 1024') or functions of the parameters, got {restrictions!r}"
    )


def space_from_tune_params(
    tune_params: Mapping[str, Sequence[Any]],
    restrictions: Sequence[str | Callable[..., Any]] | str | Callable[..., Any] = (),
    name: str | None = None,
) -> Space:
    """The :class:`Space` of Kernel Tuner-style ``tune_params`` and ``restrictions``.

    A restriction is an expression string or a function of the parameters, as
    :class:`~gpautotune.space.Space` takes constraints (it gets a mapping of name to
    values, as Kernel Tuner's do); one string or one function is one restriction.

    Raises:
        ConfigError: no parameters, a parameter without distinct values, a bad name or
            restriction (the message names it).
    """
    if not tune_params:
        raise ConfigError("tune_params: give at least one parameter and its values")
    constraints = _restrictions(restrictions)
    try:
        params = [_parameter(str(k), v) for k, v in tune_params.items()]
        return Space(params, constraints=constraints, name=name)
    except SpaceError as exc:
        raise ConfigError(f"tune_params/restrictions: {exc}") from None


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def define_lines(values: Mapping[str, Any]) -> str:
    """``#define NAME VALUE`` lines (booleans as 0/1), one per item."""
    return "".join(f"#define {k} {_literal(v)}\n" for k, v in values.items())
