"""Constraint predicates and derived quantities, written once, evaluated on columns.

A constraint is either an expression string (see :mod:`._expressions`) or a Python
callable. Callables receive a mapping ``name -> numpy array`` (one entry per parameter
and derived quantity) and should return a boolean array; a callable written for one
configuration at a time (``lambda c: c["a"] > 2 and c["b"] < 4``) still works, row by
row, with a one-time warning that it is slow.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpautotune.exceptions import PredicateError
from gpautotune.space._expressions import Expression, compile_expression

__all__ = ["Constraint", "Derived", "LazyColumns"]

_log = logging.getLogger(__name__)
ColumnFunction = Callable[[Mapping[str, np.ndarray]], Any]


def _rowwise(
    fn: ColumnFunction, cols: Mapping[str, np.ndarray], names: list[str], n: int, label: str
) -> np.ndarray:
    out = np.empty(n, dtype=object)
    for i in range(n):
        row = {k: _item(cols[k][i]) for k in names}
        try:
            out[i] = fn(row)
        except Exception as exc:  # noqa: BLE001 - the user's function, named with its input
            raise _raised(label, exc, row) from exc
    return out


def _raised(label: str, exc: Exception, row: Mapping[str, Any] | None = None) -> PredicateError:
    on = f" on {dict(row)}" if row is not None else ""
    return PredicateError(f"{label} raised {type(exc).__name__}: {exc}{on}")


def _item(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


@dataclass(frozen=True)
class _Function:
    """An expression or callable turned into one vectorised column function."""

    label: str
    fn: ColumnFunction
    expression: Expression | None

    @property
    def names(self) -> frozenset[str] | None:
        """Names read by an expression; None for a callable (it may read any)."""
        return None if self.expression is None else self.expression.names

    def evaluate(self, cols: LazyColumns) -> np.ndarray:
        n = cols.n_rows
        if self.expression is not None:
            out, undefined = self.expression.evaluate(cols)
            if np.any(undefined):  # a row Python could not evaluate is not admitted
                out = np.logical_and(out, np.logical_not(undefined))
        else:
            try:
                out = self.fn(cols)
            except (ValueError, TypeError, KeyError):
                # A scalar-style callable ("truth value of an array is ambiguous").
                out = _rowwise(self.fn, cols, cols.names, n, self.label)
                warnings.warn(
                    f"{self.label} is evaluated one configuration at a time; write it with "
                    "numpy operations (&, |, np.minimum) to vectorise it",
                    stacklevel=3,
                )
            except Exception as exc:  # noqa: BLE001 - the user's function, named
                raise _raised(self.label, exc) from exc
        out = np.asarray(out)
        return np.broadcast_to(out, (n,)) if out.ndim == 0 else out


def _make(spec: str | ColumnFunction, names: list[str], kind: str) -> _Function:
    if isinstance(spec, str):
        expr = compile_expression(spec, names)
        return _Function(label=f"{kind} {spec!r}", fn=expr, expression=expr)
    if callable(spec):
        label = getattr(spec, "__name__", repr(spec))
        return _Function(label=f"{kind} {label}", fn=spec, expression=None)
    raise PredicateError(f"a {kind} must be an expression string or a callable, got {spec!r}")


@dataclass(frozen=True)
class Constraint:
    """A predicate over a configuration: True where the configuration is allowed."""

    text: str
    _function: _Function

    @classmethod
    def build(cls, spec: str | ColumnFunction, names: list[str]) -> Constraint:
        function = _make(spec, names, "constraint")
        text = spec if isinstance(spec, str) else function.label.removeprefix("constraint ")
        return cls(text=text, _function=function)

    @property
    def names(self) -> frozenset[str] | None:
        """Parameter and derived names the predicate reads; None for a callable."""
        return self._function.names

    def mask(self, cols: LazyColumns) -> np.ndarray:
        out = self._function.evaluate(cols)
        try:
            return out.astype(bool)
        except (TypeError, ValueError):
            raise PredicateError(f"constraint {self.text!r} did not give booleans") from None


@dataclass(frozen=True)
class Derived:
    """A named quantity computed from parameters (usable in constraints and trends)."""

    name: str
    text: str
    _function: _Function

    @classmethod
    def build(cls, name: str, spec: str | ColumnFunction, names: list[str]) -> Derived:
        if not name.isidentifier():
            raise PredicateError(f"derived quantity name {name!r} must be an identifier")
        function = _make(spec, names, f"derived quantity {name!r}:")
        text = spec if isinstance(spec, str) else function.label
        return cls(name=name, text=text, _function=function)

    @property
    def names(self) -> frozenset[str] | None:
        """Names the quantity is computed from; None for a callable."""
        return self._function.names

    def evaluate(self, cols: LazyColumns) -> np.ndarray:
        return np.asarray(self._function.evaluate(cols), dtype=float)


class LazyColumns(Mapping[str, np.ndarray]):
    """Columns of parameter values, with derived quantities computed on first use."""

    def __init__(
        self, base: dict[str, np.ndarray], derived: Mapping[str, Derived], n_rows: int
    ) -> None:
        self._base = base
        self._derived = derived
        self._cache: dict[str, np.ndarray] = {}
        self.n_rows = n_rows

    @property
    def names(self) -> list[str]:
        return list(self._base) + list(self._derived)

    def __getitem__(self, key: str) -> np.ndarray:
        if key in self._base:
            return self._base[key]
        if key not in self._cache:
            if key not in self._derived:
                raise KeyError(key)
            self._cache[key] = self._derived[key].evaluate(self)
        return self._cache[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self._base) + len(self._derived)
