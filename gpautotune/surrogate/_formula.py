"""Model formulas over parameter names: the basis of trends and linear models.

A formula is a sum of terms: ``"y + 1/y + log2(threads) + lws^2 + a*b"``. Each term is
an arithmetic expression over parameter (or derived) names, written with the same safe
expression language as constraints, with ``^`` accepted for powers. Shortcuts:
``"constant"`` (no terms), ``"linear"`` (every parameter), ``"quadratic"`` (every
parameter, its square and every pairwise product). An intercept is always added by the
models that use the basis, so it is not a term.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from gpautotune.exceptions import ConfigError, PredicateError
from gpautotune.space import Categorical, Space, compile_expression
from gpautotune.space._expressions import Expression

__all__ = ["Basis", "build_basis"]


@dataclass(frozen=True)
class Basis:
    """Basis functions h(x) of a formula; call with columns to get an ``(n, k)`` matrix."""

    formula: str
    terms: tuple[Expression, ...]

    @property
    def term_names(self) -> list[str]:
        return [t.text for t in self.terms]

    @property
    def size(self) -> int:
        return len(self.terms)

    def __call__(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(columns.values()))) if columns else 0
        if not self.terms:
            return np.zeros((n, 0))
        out = np.column_stack([np.broadcast_to(np.asarray(t(columns), dtype=float), (n,)) for t in self.terms])
        return np.where(np.isfinite(out), out, 0.0)


def _numeric(space: Space, min_levels: int) -> list[str]:
    """Non-categorical parameters with at least ``min_levels`` levels (reals always)."""
    return [
        p.name for p in space.parameters
        if not isinstance(p, Categorical) and (not p.is_discrete or p.n_levels >= min_levels)
    ]


def _shortcut_terms(formula: str, space: Space) -> list[str] | None:
    if formula == "constant":
        return []
    linear = _numeric(space, 2)
    if formula == "linear":
        return linear
    if formula == "quadratic":
        squares = [f"{n}^2" for n in _numeric(space, 3)]
        return linear + squares + [f"{a}*{b}" for a, b in combinations(linear, 2)]
    return None


def build_basis(formula: str, space: Space) -> Basis:
    """Parse ``formula`` into a :class:`Basis` over ``space``'s parameters.

    Raises:
        ConfigError: a term names something that is not a parameter (the message names it
            and lists the known ones) or uses a construct outside the expression language.
    """
    if not isinstance(formula, str) or not formula.strip():
        raise ConfigError(f"a formula must be a non-empty string, got {formula!r}")
    text = formula.strip()
    terms = _shortcut_terms(text, space)
    if terms is None:
        terms = [t.strip() for t in _split_terms(text)]
    known = space.names + list(space.describe()["derived"])
    compiled = []
    for term in terms:
        if not term:
            raise ConfigError(f"empty term in formula {formula!r}")
        try:
            compiled.append(compile_expression(term.replace("^", "**"), known))
        except PredicateError as exc:
            raise ConfigError(f"formula {formula!r}: {exc}") from None
    return Basis(formula=text, terms=tuple(compiled))


def _split_terms(text: str) -> list[str]:
    """Split on top-level ``+`` (not inside parentheses)."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "+" and depth == 0 and i > 0 and text[i - 1] not in "eE*/(":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms
