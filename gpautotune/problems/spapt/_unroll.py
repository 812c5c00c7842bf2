"""Unroll-and-jam with cleanup loops (spec §1.2).

Processing is bottom-up. A loop ``for v = L..U`` with factor ``u > 1`` becomes a block
declaring a fresh ``int v`` with

    main:    for v = L .. U-(u-1) step u :  jam(S[v<-v+0], ..., S[v<-v+u-1])
    cleanup: for v = U - ((U-L+1) % u) + 1 .. U :  S

Jamming: the ``u`` copies of a statement list are *fused* when, at every position, the
copies are all non-loop statements or all loops with identical headers (blocks count as
loops when their bodies fuse by the same rule), and at least one position holds a loop.
Fusion emits the copies of a non-loop statement in copy order and one loop whose body is
the fusion of the copies' bodies. Otherwise the copies are concatenated (plain
unrolling). Jamming is not allowed at all (plain unrolling at every depth) when an inner
loop unrolled by the same component has a bound that mentions ``v``.
Main-loop statement copies are put in Orio's normal form (:mod:`._normalise`).

Two safety rules of this implementation (not needed by Orio, which restarts numbering
and fails to compile instead): a level whose copies declare scalars or hoisted bounds is
never fused, and concatenated copies that declare something get a block each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from gpautotune.problems.spapt._expr import (
    Bin,
    Call,
    Expr,
    Var,
    add,
    fold_int,
    mentions,
    num,
    sub,
)
from gpautotune.problems.spapt._nest import (
    Block,
    Decl,
    For,
    Stmt,
    iter_loops,
    map_assigns,
    subst_stmts,
)
from gpautotune.problems.spapt._normalise import normalise_assign

__all__ = ["unroll_jam", "unroll_loop", "cleanup_start"]


def cleanup_start(loop: For, factor: int) -> Expr:
    """First iteration left over by a main loop that runs ``factor`` iterations at a time.

    Step 1 (Orio's formula): ``U - ((U - L + 1) % u) + 1``. Step ``s > 1`` (a loop that an
    inner block already unrolled, LU only): ``L + (n - n % u) * s`` with the trip count
    ``n = max(0, U - L + s) / s``. Both leave an empty cleanup for an empty loop.
    """
    lo, hi, s = loop.lo, loop.hi, loop.step
    if s == 1:
        trip = fold_int(Bin("+", Bin("-", hi, lo), num(1)))
        return fold_int(Bin("+", Bin("-", hi, Bin("%", trip, num(factor))), num(1)))
    trips = Bin("/", Call("max", (num(0), fold_int(Bin("+", Bin("-", hi, lo), num(s))))), num(s))
    done = Bin("*", Bin("-", trips, Bin("%", trips, num(factor))), num(s))
    return fold_int(Bin("+", lo, done))


def _is_loop_like(s: Stmt) -> bool:
    return isinstance(s, (For, Block))


def _fusable(items: list[Stmt]) -> bool:
    """Whether the copies at one position can be fused.

    A block stands for the loops inside it (an unrolled loop's main and cleanup loops,
    a loop behind hoisted bounds), so blocks fuse only when their bodies fuse by the same
    rule. Fusing blocks whose bodies are then concatenated would run every copy's first
    statement before any copy's second one, an order no loop jamming justifies (lu's k
    body: all divisions of the unrolled rows before their updates).
    """
    first = items[0]
    if isinstance(first, For):
        return all(isinstance(s, For) and s.same_header(first) for s in items)
    if isinstance(first, Block):
        blocks = [s for s in items if isinstance(s, Block)]
        return len(blocks) == len(items) and _fuses([b.body for b in blocks])
    return not any(_is_loop_like(s) for s in items)


def _decl_conflict(items: list[Stmt]) -> bool:
    """Declarations other than identical unrolled-index ones cannot be fused."""
    if not any(isinstance(s, Decl) for s in items):
        return False
    return not all(isinstance(s, Decl) and s.kind == "index" and s == items[0] for s in items)


def _fuses(copies: list[tuple[Stmt, ...]]) -> bool:
    """The jamming rule: same length, every position fusable, at least one loop."""
    n = len(copies[0])
    if any(len(c) != n for c in copies):
        return False
    has_loop = False
    for p in range(n):
        items = [c[p] for c in copies]
        if not _fusable(items) or _decl_conflict(items):
            return False
        has_loop |= _is_loop_like(items[0])
    return has_loop


def jam(copies: list[tuple[Stmt, ...]]) -> tuple[Stmt, ...]:
    """Fuse the copies position by position where the jamming rule allows it."""
    if not _fuses(copies):
        return _concatenate(copies)
    out: list[Stmt] = []
    for p in range(len(copies[0])):
        items = [c[p] for c in copies]
        first = items[0]
        if isinstance(first, For):
            out.append(replace(first, body=jam([s.body for s in items])))  # type: ignore[union-attr]
        elif isinstance(first, Block):
            out.append(Block(jam([s.body for s in items])))  # type: ignore[union-attr]
        elif isinstance(first, Decl):
            out.append(first)
        else:
            out.extend(items)
    return tuple(out)


def _concatenate(copies: list[tuple[Stmt, ...]]) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for c in copies:
        if any(isinstance(s, Decl) for s in c):
            out.append(Block(c))
        else:
            out.extend(c)
    return tuple(out)


def unroll_loop(loop: For, factor: int, *, jam_copies: bool = True) -> Block:
    """Unroll-and-jam one loop by ``factor`` (its body already processed).

    ``jam_copies=False`` concatenates the copies (plain unrolling) instead of jamming them.
    """
    v, s = loop.var, loop.step
    copies = [
        map_assigns(subst_stmts(loop.body, {v: add(Var(v), c * s)} if c else {}), normalise_assign)
        for c in range(factor)
    ]
    body = jam(copies) if jam_copies else _concatenate(copies)
    main = replace(loop, hi=sub(loop.hi, (factor - 1) * s), step=factor * s, body=body)
    cleanup = replace(loop, lo=cleanup_start(loop, factor))
    return Block((Decl("int", (v,), kind="index"), main, cleanup))


def _jamming_allowed(loop: For, factors: Mapping[str, int]) -> bool:
    """False when an inner loop unrolled by the same component has a bound mentioning
    ``loop``'s index (spec §1.2: then the copies are plainly unrolled, at every depth)."""
    return not any(
        factors.get(inner.var, 1) > 1
        and (mentions(inner.lo, loop.var) or mentions(inner.hi, loop.var))
        for inner in iter_loops(loop.body)
    )


def unroll_jam(stmts: tuple[Stmt, ...], factors: Mapping[str, int]) -> tuple[Stmt, ...]:
    """Unroll-and-jam every loop named in ``factors`` (factor 1 and absent loops: no-op)."""
    if all(u <= 1 for u in factors.values()):
        return stmts
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, For):
            allowed = _jamming_allowed(s, factors)
            s = replace(s, body=unroll_jam(s.body, factors))
            if factors.get(s.var, 1) > 1:
                s = unroll_loop(s, factors[s.var], jam_copies=allowed)
        elif isinstance(s, Block):
            s = Block(unroll_jam(s.body, factors))
        out.append(s)
    return tuple(out)
