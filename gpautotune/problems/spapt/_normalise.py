"""Orio's algebraic normalisation of the statement copies of an unrolled main loop.

Spec §1.2 ("Constant folding"): every statement copy placed in an unroll-and-jam *main*
loop is rewritten; cleanup loops and register-tiling copies are not.

* Sums and differences are flattened (also through parentheses that sit directly in the
  sum), numeric literals are summed into one trailing constant, and the terms are stably
  reordered so that added terms precede subtracted ones: ``a - b + c -> a + c - b``.
* Products and quotients are flattened; numeric literal factors are multiplied into one
  leading constant; a literal divisor ``d`` becomes a factor ``1/d`` printed with 12
  significant digits (``x / 9.0 -> 0.111111111111 * x``); whole-valued constants print as
  integers (``2.0 * b -> 2 * b``); non-literal divisors are gathered into one divisor.

Inside subscripts (integer context) only sums are normalised: a literal divisor there
would change integer division, so products are left alone.
"""

from __future__ import annotations

import math

from gpautotune.problems.spapt._expr import Bin, Call, Expr, Neg, Num, Ref
from gpautotune.problems.spapt._nest import Assign

__all__ = ["normalise", "normalise_assign"]


def _const(value: float) -> Num:
    if float(value).is_integer() and abs(value) < 2**31:
        return Num(int(value), str(int(value)))
    return Num(float(value), f"{value:.12g}")


def _is_literal(e: Expr) -> bool:
    return isinstance(e, Num)


def _sum_terms(e: Expr, sign: int, out: list[tuple[int, Expr]]) -> None:
    if isinstance(e, Bin) and e.op in "+-":
        _sum_terms(e.left, sign, out)
        _sum_terms(e.right, sign if e.op == "+" else -sign, out)
    elif isinstance(e, Neg):
        _sum_terms(e.operand, -sign, out)
    else:
        out.append((sign, e))


def _normalise_sum(e: Expr, in_subscript: bool) -> Expr:
    terms: list[tuple[int, Expr]] = []
    _sum_terms(e, 1, terms)
    terms = [(s, normalise(t, in_subscript=in_subscript)) for s, t in terms]
    const = sum(s * t.value for s, t in terms if _is_literal(t))  # type: ignore[union-attr]
    added = [t for s, t in terms if s > 0 and not _is_literal(t)]
    subtracted = [t for s, t in terms if s < 0 and not _is_literal(t)]
    if not added and not subtracted:
        return _const(const)
    out: Expr = added[0] if added else Neg(subtracted[0])
    for t in added[1:]:
        out = Bin("+", out, t)
    for t in subtracted[1:] if not added else subtracted:
        out = Bin("-", out, t)
    if const:
        out = Bin("+" if const > 0 else "-", out, _const(abs(const)))
    return out


def _product_factors(e: Expr, num_out: list[Expr], den_out: list[Expr], inverted: bool) -> None:
    if isinstance(e, Bin) and e.op in "*/":
        _product_factors(e.left, num_out, den_out, inverted)
        _product_factors(e.right, num_out, den_out, inverted ^ (e.op == "/"))
    else:
        (den_out if inverted else num_out).append(e)


def _normalise_product(e: Expr) -> Expr:
    numer: list[Expr] = []
    denom: list[Expr] = []
    _product_factors(e, numer, denom, False)
    numer = [normalise(f) for f in numer]
    denom = [normalise(f) for f in denom]
    const = math.prod(f.value for f in numer if _is_literal(f))  # type: ignore[union-attr]
    for f in denom:
        if _is_literal(f):
            const /= f.value  # type: ignore[union-attr]
    factors = [f for f in numer if not _is_literal(f)]
    divisors = [f for f in denom if not _is_literal(f)]
    parts: list[Expr] = ([_const(const)] if const != 1 or not factors else []) + factors
    out = parts[0]
    for f in parts[1:]:
        out = Bin("*", out, f)
    if divisors:
        div = divisors[0]
        for f in divisors[1:]:
            div = Bin("*", div, f)
        out = Bin("/", out, div)
    return out


def normalise(e: Expr, *, in_subscript: bool = False) -> Expr:
    """Orio's normal form of one expression (see the module docstring)."""
    if isinstance(e, Ref):
        return Ref(e.name, tuple(normalise(s, in_subscript=True) for s in e.subs))
    if isinstance(e, Call):
        return Call(e.fn, tuple(normalise(a, in_subscript=in_subscript) for a in e.args))
    if isinstance(e, Neg) or (isinstance(e, Bin) and e.op in "+-"):
        return _normalise_sum(e, in_subscript)
    if isinstance(e, Bin) and e.op in "*/" and not in_subscript:
        return _normalise_product(e)
    if isinstance(e, Bin):
        return Bin(
            e.op,
            normalise(e.left, in_subscript=in_subscript),
            normalise(e.right, in_subscript=in_subscript),
        )
    return e


def normalise_assign(s: Assign) -> Assign:
    """Normalise both sides of an expression statement (once: the result is flagged)."""
    if s.normal:
        return s
    return Assign(normalise(s.target), s.op, normalise(s.value), normal=True)
