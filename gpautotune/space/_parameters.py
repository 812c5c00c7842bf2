"""Typed parameters of a search space.

Every parameter maps between three representations:

* **values** — what the user writes in a configuration (``64``, ``True``, ``"short"``);
* **indices** — the internal, vectorised form: the level index ``0..L-1`` for discrete
  parameters, the unit position for :class:`Real`;
* **positions** — the model encoding in ``[0, 1]`` (``log2`` or linear spacing of the
  levels, level index for categoricals), used by surrogates and distances.

Sampling in the unit cube uses equal-width cells (``floor(u * L)``), so a uniform or Sobol
point gives each level the same mass whatever the encoding scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from gpautotune.exceptions import SpaceError

__all__ = ["Parameter", "Ordinal", "IntRange", "Categorical", "Boolean", "Real", "PowerOfTwo"]

Scale = Literal["index", "linear", "log2"]

#: The most levels an :class:`IntRange` may have: its levels are built and indexed (ten
#: million take some 25 s and a few GB; 2**40 was a bare MemoryError). Not the space's
#: enumeration limit, which counts the raw points of all the parameters together.
MAX_LEVELS = 10_000_000


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name.isidentifier():
        raise SpaceError(
            f"parameter name {name!r} must be a Python identifier (letters, digits, _)"
        )


@dataclass(frozen=True)
class Parameter:
    """Base class: a named factor with its levels (or a real interval)."""

    name: str

    @property
    def is_discrete(self) -> bool:
        return True

    @property
    def n_levels(self) -> int:
        raise NotImplementedError

    def values_at(self, index: np.ndarray) -> np.ndarray:
        """Values for an array of indices."""
        raise NotImplementedError

    def index_of(self, values: Sequence[Any]) -> np.ndarray:
        """Indices of values; raises :class:`SpaceError` naming a value that is not a level."""
        raise NotImplementedError

    def positions(self, index: np.ndarray) -> np.ndarray:
        """Model encoding in [0, 1] of an array of indices."""
        raise NotImplementedError

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Indices of unit-cube coordinates (equal-width cells)."""
        raise NotImplementedError

    def snap(self, position: np.ndarray) -> np.ndarray:
        """Index of the level whose position is nearest (inverse of :meth:`positions`)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (kind and arguments)."""
        raise NotImplementedError

    def from_text(self, text: str) -> Any:
        """The value written as ``text`` (a CSV cell): the level written so (a text level
        before others of the same text), else the number it reads as, else the text itself
        (which :meth:`index_of` then refuses, naming the levels). An empty cell is the
        ``None`` level where there is one (an export writes ``None`` so), else NaN."""
        levels = sorted(getattr(self, "levels", ()), key=lambda v: not isinstance(v, str))
        for level in levels:
            if str(level) == text:
                return level
        if not text.strip():
            return None if any(level is None for level in levels) else math.nan
        for number in (int, float):
            try:
                return number(text)
            except ValueError:
                continue
        return text


def _whole(where: str, what: str, value: Any) -> int:
    """``value`` as an int; a :class:`SpaceError` unless it is an int or a numpy integer
    (a bool, a float, even 2.0, or a string is refused, not truncated)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise SpaceError(f"{where}: {what} must be a whole number (an int), got {value!r}")
    return int(value)


def _check_finite(name: str, levels: tuple[Any, ...]) -> None:
    """Refuse NaN (a missing value, as pandas' ``unique()`` gives for a gap) and
    infinities among the levels: no configuration could be stored and found again."""
    for v in levels:
        if isinstance(v, float | np.floating) and not math.isfinite(v):
            fix = (
                "drop missing values from its levels"
                if math.isnan(v)
                else "a level must be a finite number"
            )
            raise SpaceError(f"parameter {name!r} has a level {float(v)!r}: {fix}")


def _level_array(levels: tuple[Any, ...]) -> np.ndarray:
    """The levels as an array that gives each back as it was given: numpy's own dtype
    where it keeps every level's type, else an object array (choices among ``0`` and
    ``"auto"``, or ``1`` and ``2.5``, would otherwise come back as strings or floats)."""
    array = np.asarray(levels)
    plain = [v.item() if isinstance(v, np.generic) else v for v in levels]
    if array.dtype != object and all(
        type(a) is type(v) for a, v in zip(array.tolist(), plain, strict=True)
    ):
        return array
    out = np.empty(len(plain), dtype=object)
    out[:] = plain
    return out


@dataclass(frozen=True)
class _Levels(Parameter):
    """A parameter with a finite, ordered tuple of levels, each given back of its own type
    (see :func:`_level_array`)."""

    levels: tuple[Any, ...] = ()
    _lookup: dict[Any, int] = field(init=False, repr=False, compare=False)
    _array: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        levels = tuple(self.levels)
        if not levels:
            raise SpaceError(f"parameter {self.name!r} needs at least one level")
        _check_finite(self.name, levels)
        if len(set(levels)) != len(levels):
            raise SpaceError(f"parameter {self.name!r} has repeated levels: {levels}")
        object.__setattr__(self, "levels", levels)
        object.__setattr__(self, "_lookup", {v: i for i, v in enumerate(levels)})
        object.__setattr__(self, "_array", _level_array(levels))

    @property
    def n_levels(self) -> int:
        return len(self.levels)

    def values_at(self, index: np.ndarray) -> np.ndarray:
        return self._array[np.asarray(index, dtype=np.int64)]

    def index_of(self, values: Sequence[Any]) -> np.ndarray:
        out = np.empty(len(values), dtype=np.int64)
        for k, value in enumerate(values):
            i = self._lookup.get(self._normalise(value))
            if i is None:
                raise SpaceError(
                    f"{value!r} is not a level of parameter {self.name!r}; "
                    f"allowed: {list(self.levels)}"
                )
            out[k] = i
        return out

    def _normalise(self, value: Any) -> Any:
        if isinstance(value, np.generic):
            value = value.item()
        return value

    def _grid(self) -> np.ndarray:
        n = self.n_levels
        return np.zeros(1) if n == 1 else np.arange(n) / (n - 1)

    def positions(self, index: np.ndarray) -> np.ndarray:
        return self._grid()[np.asarray(index, dtype=np.int64)]

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        n = self.n_levels
        return np.minimum((np.asarray(u) * n).astype(np.int64), n - 1)

    def snap(self, position: np.ndarray) -> np.ndarray:
        grid = self._grid()
        pos = np.clip(np.asarray(position, dtype=float), 0.0, 1.0)
        right = np.clip(np.searchsorted(grid, pos), 1, max(len(grid) - 1, 1))
        if len(grid) == 1:
            return np.zeros(pos.shape, dtype=np.int64)
        left = right - 1
        return np.where(pos - grid[left] <= grid[right] - pos, left, right).astype(np.int64)


@dataclass(frozen=True)
class Ordinal(_Levels):
    """Ordered numeric levels, e.g. ``Ordinal("threads", (32, 64, 128))``.

    ``scale`` sets the model encoding: ``"index"`` (equally spaced levels), ``"linear"``
    (positions proportional to the values) or ``"log2"`` (proportional to log2 of the
    values; all levels must be positive). Each level comes back of its own type: of
    ``(1, 1.5, 2)``, ``1`` stays an int (a kernel gets ``#define factor 1``, not ``1.0``).
    """

    scale: Scale = "index"

    def __post_init__(self) -> None:
        levels = tuple(self.levels)
        for v in levels:
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise SpaceError(f"ordinal parameter {self.name!r} has a non-numeric level {v!r}")
        object.__setattr__(
            self,
            "levels",
            tuple(sorted(v.item() if isinstance(v, np.generic) else v for v in levels)),
        )
        super().__post_init__()
        if self.scale not in ("index", "linear", "log2"):
            raise SpaceError(
                f"parameter {self.name!r}: scale must be index, linear or log2, not {self.scale!r}"
            )
        if self.scale == "log2" and min(self.levels) <= 0:
            raise SpaceError(
                f"parameter {self.name!r}: scale='log2' needs positive levels, got {self.levels}"
            )

    def _normalise(self, value: Any) -> Any:
        value = super()._normalise(value)
        if isinstance(value, float) and value.is_integer() and int(value) in self._lookup:
            return int(value)
        return value

    def _grid(self) -> np.ndarray:
        if self.n_levels == 1 or self.scale == "index":
            return super()._grid()
        vals = np.asarray(self.levels, dtype=float)
        if self.scale == "log2":
            vals = np.log2(vals)
        return (vals - vals[0]) / (vals[-1] - vals[0])

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "ordinal",
            "name": self.name,
            "levels": list(self.levels),
            "scale": self.scale,
        }


def PowerOfTwo(name: str, low: int, high: int) -> Ordinal:  # noqa: N802 - a constructor
    """Powers of two from ``low`` to ``high`` inclusive, encoded on a log2 scale.

    Raises:
        SpaceError: ``low`` or ``high`` is not a whole number, or not a power of two, or
            ``high < low``.
    """
    low = _whole(f"PowerOfTwo({name!r})", "low", low)
    high = _whole(f"PowerOfTwo({name!r})", "high", high)
    if low <= 0 or high < low or low & (low - 1) or high & (high - 1):
        raise SpaceError(
            f"PowerOfTwo({name!r}): low={low} and high={high} must be powers of two, low <= high"
        )
    return Ordinal(
        name,
        tuple(2**k for k in range(int(math.log2(low)), int(math.log2(high)) + 1)),
        scale="log2",
    )


@dataclass(frozen=True)
class IntRange(Ordinal):
    """Integers ``low, low+step, ..., <= high`` (linear encoding).

    Raises:
        SpaceError: ``low``, ``high`` or ``step`` is not a whole number (an int or a numpy
            integer: ``1.5`` is not truncated), ``step < 1``, ``high < low``, or the range
            has more than :data:`MAX_LEVELS` levels.
    """

    low: int = 0
    high: int = 0
    step: int = 1

    def __init__(self, name: str, low: int, high: int, step: int = 1) -> None:
        where = f"IntRange({name!r})"
        low, high = _whole(where, "low", low), _whole(where, "high", high)
        step = _whole(where, "step", step)
        if step <= 0 or high < low:
            raise SpaceError(
                f"{where}: need step >= 1 and high >= low, got low={low} high={high} step={step}"
            )
        count = (high - low) // step + 1
        if count > MAX_LEVELS:
            raise SpaceError(
                f"{where}: low={low} high={high} step={step} gives {count:,} levels, at most "
                f"{MAX_LEVELS:,}: give a larger step, or use Real({name!r}, ...)"
            )
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "step", step)
        super().__init__(name=name, levels=tuple(range(low, high + 1, step)), scale="linear")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "int",
            "name": self.name,
            "low": self.low,
            "high": self.high,
            "step": self.step,
        }


@dataclass(frozen=True)
class Categorical(_Levels):
    """Unordered choices (strings or numbers); encoded by their index. Each choice comes
    back as it was given, of its own type (``0`` and ``"auto"`` among one's choices)."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "categorical", "name": self.name, "choices": list(self.levels)}


@dataclass(frozen=True)
class Boolean(_Levels):
    """``False`` / ``True`` (in that order)."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name, levels=(False, True))

    def _normalise(self, value: Any) -> Any:
        value = super()._normalise(value)
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        return value

    def describe(self) -> dict[str, Any]:
        return {"kind": "bool", "name": self.name}


@dataclass(frozen=True)
class Real(Parameter):
    """A real interval ``[low, high]`` (optionally log-scaled). Its index is the unit position."""

    low: float = 0.0
    high: float = 1.0
    log: bool = False

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.high <= self.low:
            raise SpaceError(
                f"Real({self.name!r}): need finite low < high, got [{self.low}, {self.high}]"
            )
        if self.log and self.low <= 0:
            raise SpaceError(f"Real({self.name!r}): log=True needs low > 0, got {self.low}")

    @property
    def is_discrete(self) -> bool:
        return False

    @property
    def n_levels(self) -> int:
        raise SpaceError(f"parameter {self.name!r} is real-valued and has no finite levels")

    def values_at(self, index: np.ndarray) -> np.ndarray:
        """Values of unit positions, inside ``[low, high]`` (rounding put the ends a few
        ulps outside, and :meth:`index_of` refused the tuner's own configurations)."""
        u = np.asarray(index, dtype=float)
        if self.log:
            values = np.exp(np.log(self.low) + u * (np.log(self.high) - np.log(self.low)))
        else:
            values = self.low + u * (self.high - self.low)
        return np.clip(values, self.low, self.high)

    def index_of(self, values: Sequence[Any]) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if np.any((v < self.low) | (v > self.high)) or np.any(~np.isfinite(v)):
            bad = v[(v < self.low) | (v > self.high) | ~np.isfinite(v)][0]
            raise SpaceError(
                f"{bad!r} is outside parameter {self.name!r}'s range [{self.low}, {self.high}]"
            )
        if self.log:
            return (np.log(v) - np.log(self.low)) / (np.log(self.high) - np.log(self.low))
        return (v - self.low) / (self.high - self.low)

    def positions(self, index: np.ndarray) -> np.ndarray:
        return np.asarray(index, dtype=float)

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        return np.asarray(u, dtype=float)

    def snap(self, position: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(position, dtype=float), 0.0, 1.0)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "real",
            "name": self.name,
            "low": self.low,
            "high": self.high,
            "log": self.log,
        }
