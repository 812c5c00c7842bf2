"""C expressions of the loop-nest representation: nodes, substitution, folding, printing.

Expressions are immutable trees. Array references keep their subscripts as expressions so
that transformations can substitute loop indices (``i -> (i + 1)``) and fold the integer
constants of index and bound expressions (``(i + 1) + 1 -> i + 2``, ``(i + 1) - 1 -> i``).
Floating-point statements are never folded here (that would change rounding); the
Orio-style normalisation of unrolled copies lives in :mod:`._normalise`.

Printing uses C precedence with the fewest parentheses that keep the tree's evaluation
order exactly (``a + (b + c)`` keeps its parentheses: floating point is not associative).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Expr",
    "Num",
    "Var",
    "Ref",
    "Bin",
    "Neg",
    "Call",
    "num",
    "add",
    "sub",
    "substitute",
    "mentions",
    "variables",
    "refs",
    "map_expr",
    "fold_int",
    "fold_indices",
    "to_c",
    "ref_text",
]


@dataclass(frozen=True)
class Num:
    """A numeric literal; ``text`` is how it is printed (``9.0``, ``0.333``, ``2``)."""

    value: int | float
    text: str


@dataclass(frozen=True)
class Var:
    """An identifier: a loop index, a size macro, a scalar."""

    name: str


@dataclass(frozen=True)
class Ref:
    """An array reference ``name[s1][s2]...`` (one subscript for flat buffers)."""

    name: str
    subs: tuple[Expr, ...]


@dataclass(frozen=True)
class Bin:
    """A binary operation; ``op`` is one of ``+ - * / %``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    operand: Expr


@dataclass(frozen=True)
class Call:
    """A function-like call: ``sqrt(x)``, ``min(a, b)`` (``min``/``max`` are macros)."""

    fn: str
    args: tuple[Expr, ...]


Expr = Num | Var | Ref | Bin | Neg | Call


def num(value: int | float) -> Num:
    """A literal printed the C way (integers without a decimal point)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return Num(value, repr(value))
    return Num(value, str(value))


def add(left: Expr, right: Expr | int) -> Expr:
    """``left + right`` with integer constants folded."""
    return fold_int(Bin("+", left, num(right) if isinstance(right, int) else right))


def sub(left: Expr, right: Expr | int) -> Expr:
    """``left - right`` with integer constants folded."""
    return fold_int(Bin("-", left, num(right) if isinstance(right, int) else right))


# --------------------------------------------------------------------------- traversal
def _same(new: tuple[Expr, ...], old: tuple[Expr, ...]) -> bool:
    return all(a is b for a, b in zip(new, old, strict=True))


def map_expr(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild ``expr`` bottom-up; ``fn(node)`` returns a replacement or None to keep it.

    Unchanged subtrees are returned as the same objects (nothing is rebuilt).
    """
    if isinstance(expr, Ref):
        subs = tuple(map_expr(s, fn) for s in expr.subs)
        expr = expr if _same(subs, expr.subs) else Ref(expr.name, subs)
    elif isinstance(expr, Bin):
        left, right = map_expr(expr.left, fn), map_expr(expr.right, fn)
        expr = expr if left is expr.left and right is expr.right else Bin(expr.op, left, right)
    elif isinstance(expr, Neg):
        operand = map_expr(expr.operand, fn)
        expr = expr if operand is expr.operand else Neg(operand)
    elif isinstance(expr, Call):
        args = tuple(map_expr(a, fn) for a in expr.args)
        expr = expr if _same(args, expr.args) else Call(expr.fn, args)
    out = fn(expr)
    return expr if out is None else out


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of ``expr``, parents before children."""
    yield expr
    if isinstance(expr, Ref):
        for s in expr.subs:
            yield from walk(s)
    elif isinstance(expr, Bin):
        yield from walk(expr.left)
        yield from walk(expr.right)
    elif isinstance(expr, Neg):
        yield from walk(expr.operand)
    elif isinstance(expr, Call):
        for a in expr.args:
            yield from walk(a)


def variables(expr: Expr) -> set[str]:
    """Identifiers used in ``expr`` (array names excluded)."""
    return {n.name for n in walk(expr) if isinstance(n, Var)}


def mentions(expr: Expr, name: str) -> bool:
    """Whether identifier ``name`` occurs in ``expr``."""
    return any(isinstance(n, Var) and n.name == name for n in walk(expr))


def refs(expr: Expr) -> Iterator[Ref]:
    """The outermost array references of ``expr``, left to right."""
    if isinstance(expr, Ref):
        yield expr
    elif isinstance(expr, Bin):
        yield from refs(expr.left)
        yield from refs(expr.right)
    elif isinstance(expr, Neg):
        yield from refs(expr.operand)
    elif isinstance(expr, Call):
        for a in expr.args:
            yield from refs(a)


def substitute(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Replace identifiers by expressions, then fold the integer constants of subscripts.

    Substituted loop indices occur in subscripts and in loop bounds; both are integer
    expressions, so ``A[(i + 1) + 1]`` becomes ``A[i + 2]``.
    """
    if not mapping:
        return expr
    return _substitute(expr, mapping)


def _substitute(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    if isinstance(expr, Var):
        return mapping.get(expr.name, expr)
    if isinstance(expr, Ref):
        subs = tuple(_substitute(s, mapping) for s in expr.subs)
        return expr if _same(subs, expr.subs) else Ref(expr.name, tuple(fold_int(s) for s in subs))
    if isinstance(expr, Bin):
        left, right = _substitute(expr.left, mapping), _substitute(expr.right, mapping)
        return expr if left is expr.left and right is expr.right else Bin(expr.op, left, right)
    if isinstance(expr, Neg):
        operand = _substitute(expr.operand, mapping)
        return expr if operand is expr.operand else Neg(operand)
    if isinstance(expr, Call):
        args = tuple(_substitute(a, mapping) for a in expr.args)
        return expr if _same(args, expr.args) else Call(expr.fn, args)
    return expr


# ----------------------------------------------------------------------------- folding
def _terms(expr: Expr, sign: int, out: list[tuple[int, Expr]]) -> None:
    if isinstance(expr, Bin) and expr.op in "+-":
        _terms(expr.left, sign, out)
        _terms(expr.right, sign if expr.op == "+" else -sign, out)
    elif isinstance(expr, Neg):
        _terms(expr.operand, -sign, out)
    else:
        out.append((sign, expr))


def fold_int(expr: Expr) -> Expr:
    """Fold the integer literals of a sum into one trailing constant (integer context only).

    ``(i + 1) - 1 -> i``; ``ii + 16 - 1 -> ii + 15``; equal terms of opposite signs
    cancel; other terms keep their order.
    """
    terms: list[tuple[int, Expr]] = []
    _terms(expr, 1, terms)
    const = sum(s * t.value for s, t in terms if isinstance(t, Num) and isinstance(t.value, int))
    rest: list[tuple[int, Expr]] = []
    for s, t in terms:
        if isinstance(t, Num) and isinstance(t.value, int):
            continue
        if (-s, t) in rest:  # x - x cancels
            rest.remove((-s, t))
        else:
            rest.append((s, t))
    if not rest:
        return num(const)
    sign, first = rest[0]
    out: Expr = first if sign > 0 else Neg(first)
    for s, t in rest[1:]:
        out = Bin("+" if s > 0 else "-", out, t)
    if const:
        out = Bin("+" if const > 0 else "-", out, num(abs(const)))
    return out


def fold_indices(expr: Expr) -> Expr:
    """Fold integer constants inside every subscript of ``expr``."""

    def fix(e: Expr) -> Expr | None:
        if isinstance(e, Ref):
            return Ref(e.name, tuple(fold_int(s) for s in e.subs))
        return None

    return map_expr(expr, fix)


# ---------------------------------------------------------------------------- printing
_PREC = {"+": 4, "-": 4, "*": 5, "/": 5, "%": 5}


def _prec(expr: Expr) -> int:
    if isinstance(expr, Bin):
        return _PREC[expr.op]
    if isinstance(expr, Neg):
        return 6
    if isinstance(expr, Num) and expr.text.startswith("-"):
        return 6
    return 7


@lru_cache(maxsize=1 << 16)
def ref_text(ref: Ref) -> str:
    """The C text of an array reference (memoised: scalar replacement keys on it)."""
    return to_c(ref)


def to_c(expr: Expr) -> str:
    """C source of ``expr`` (left-associative operators, minimal parentheses)."""
    if isinstance(expr, Num):
        return expr.text
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Ref):
        return expr.name + "".join(f"[{to_c(s)}]" for s in expr.subs)
    if isinstance(expr, Call):
        return f"{expr.fn}({', '.join(to_c(a) for a in expr.args)})"
    if isinstance(expr, Neg):
        inner = to_c(expr.operand)
        return f"-({inner})" if _prec(expr.operand) <= 6 else f"-{inner}"
    p = _PREC[expr.op]
    left, right = to_c(expr.left), to_c(expr.right)
    if _prec(expr.left) < p:
        left = f"({left})"
    if _prec(expr.right) <= p:
        right = f"({right})"
    return f"{left} {expr.op} {right}"
