"""Kernel inputs derived from the space's predicates: the products and quotients they name.

A tuning script's restrictions say which parameters act together: ``MWG % (MDIMC * VWM)
== 0`` (the work-group tile holds a whole number of thread tiles) names the product
``MDIMC * VWM`` and the quotient ``MWG / (MDIMC * VWM)`` (work per thread), ``T2_I == 1 or
T2_I % T1_I == 0`` the ratio of an outer tile to an inner one, ``RT_I * RT_J <= 150`` a
register tile's area. A stationary kernel over the parameters sees such a quantity only as
a diagonal of the input box; given as an input of its own it gets its own length-scale.

:func:`predicate_monomials` reads them from the predicates' text (and from the derived
quantities a predicate names, when those are themselves products or quotients), with no
knowledge of any kernel: every ``a * b``, ``a / b``, ``a // b`` of two or more positive
numeric parameters, and for ``a % b`` the quotient ``a / b``. :class:`Monomial` evaluates
one on parameter columns, on a log scale (a product of powers of two is then evenly spaced,
as the parameters themselves are). Where a predicate is opaque (a set of rows, a function),
the caller can pass the relations the valid set obeys
(:func:`gpautotune.space.valid_set_relations`) as further texts. No library does this:
BoTorch and GPyTorch take the inputs they are given, and ConfigSpace's conditions are not
arithmetic.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpautotune.space import Space, positive_numeric

__all__ = ["Monomial", "predicate_monomials"]


@dataclass(frozen=True)
class Monomial:
    """``∏ parameter ** power`` (nonzero integer powers), in the space's parameter order."""

    powers: tuple[tuple[str, int], ...]

    @property
    def label(self) -> str:
        """``a*b``, ``a/(b*c)``."""
        up = [n if k == 1 else f"{n}^{k}" for n, k in self.powers if k > 0]
        down = [n if k == -1 else f"{n}^{-k}" for n, k in self.powers if k < 0]
        top = "*".join(up) or "1"
        if not down:
            return top
        return f"{top}/{down[0]}" if len(down) == 1 else f"{top}/({'*'.join(down)})"

    def log_values(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """``log ∏ value ** power`` of each row (the parameters' values are positive)."""
        return sum(k * np.log(np.asarray(columns[n], dtype=float)) for n, k in self.powers)


def predicate_monomials(
    space: Space, exclude: Sequence[str] = (), relations: Sequence[str] = ()
) -> tuple[Monomial, ...]:
    """The products and quotients of two or more positive numeric parameters that the
    space's predicates name, then those of ``relations`` (further predicate texts, such as
    :func:`~gpautotune.space.valid_set_relations` finds), in the order first met, each
    once (``a/b`` and ``b/a`` are one input); none equal to a parameter or to a derived
    quantity named in ``exclude`` (inputs the model has already)."""
    spec = space.describe()
    positive = set(positive_numeric(space))
    order = {p.name: j for j, p in enumerate(space.parameters)}
    derived = {name: _parse(text) for name, text in spec["derived"].items()}
    reader = _Reader(positive, derived)
    seen = {_key(m) for m in (reader.monomial(derived.get(n)) for n in exclude) if m}
    out: list[Monomial] = []
    for text in [*spec["constraints"], *relations]:
        tree = _parse(text)
        if tree is None:
            continue
        for found in reader.found(tree):
            key = _key(found)
            if key is None or key in seen:
                continue
            seen.add(key)
            powers = {n: k for n, k in found.items() if k}
            out.append(Monomial(tuple((n, powers[n]) for n in sorted(powers, key=order.get))))
    return tuple(out)


def _parse(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:  # a callable's description, not an expression
        return None


def _key(powers: dict[str, int] | None) -> tuple[tuple[str, int], ...] | None:
    """The powers, signed so that the first (by name) is positive: ``a/b`` and ``b/a``
    share one key; None for fewer than two parameters."""
    if powers is None:
        return None
    items = sorted((n, k) for n, k in powers.items() if k)
    if len(items) < 2:
        return None
    sign = 1 if items[0][1] > 0 else -1
    return tuple((n, sign * k) for n, k in items)


def _combine(left: dict[str, int], right: dict[str, int], sign: int) -> dict[str, int]:
    """The powers of ``left * right`` (``sign`` 1) or ``left / right`` (``sign`` -1)."""
    out = dict(left)
    for n, k in right.items():
        out[n] = out.get(n, 0) + sign * k
    return out


class _Reader:
    """Monomials of expression trees over ``positive`` parameters and ``derived`` names."""

    def __init__(self, positive: set[str], derived: Mapping[str, ast.expr | None]) -> None:
        self.positive, self.derived = positive, derived

    def monomial(self, node: ast.expr | None) -> dict[str, int] | None:
        """The node as ``{parameter: power}`` when it is a product or quotient of positive
        parameters and constants (constants dropped), else None."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return {} if node.value > 0 and not isinstance(node.value, bool) else None
        if isinstance(node, ast.Name):
            if node.id in self.positive:
                return {node.id: 1}
            return self.monomial(self.derived.get(node.id))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Div | ast.FloorDiv):
            left, right = self.monomial(node.left), self.monomial(node.right)
            if left is None or right is None:
                return None
            return _combine(left, right, 1 if isinstance(node.op, ast.Mult) else -1)
        return None

    def found(self, tree: ast.expr) -> list[dict[str, int]]:
        """Every product, quotient and ``%`` quotient in ``tree`` (through the derived
        quantities it names), outermost first."""
        out: list[dict[str, int]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
                left, right = self.monomial(node.left), self.monomial(node.right)
                if left is not None and right is not None:
                    out.append(_combine(left, right, -1))
            elif isinstance(node, ast.BinOp):
                m = self.monomial(node)
                if m is not None:
                    out.append(m)
            elif isinstance(node, ast.Name) and self.derived.get(node.id) is not None:
                out.extend(self.found(self.derived[node.id]))  # type: ignore[arg-type]
        return out
