"""Register tiling: unroll-and-jam carried down to the innermost statements (spec §1.3).

A loop ``for v = L..U`` with factor ``r > 1`` becomes

    main:    for vt = L .. U-(r-1) step r :  body, every statement replicated
    cleanup: for v = U - ((U-L+1) % r) + 1 .. U :  body (inner register tiling applied)

Inside main loops every statement is replicated over the Cartesian product of the offsets
of the enclosing register-tiled loops (outermost offset slowest). Loops that are not
register-tiled stay loops and receive the replicated statements. A loop whose bounds
mention a register-tiled outer index cannot be jammed: it is replicated whole, once per
outer offset (this also covers Orio's non-rectangular case, which its generated code
fails to compile).

This is the *correct* register tiling the specification recommends: within a run of
replicated items (statements and replicated loops) the copies are emitted copy-major,
and jammed loops keep every statement before and after them, with their cleanup loops
(Orio's truncating merge quirk is not reproduced). The cleanup loop starts where the
modulo formula says rather than at the main index's final value (same iterations, and
still right when an OpenMP pragma makes that final value unspecified).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import replace

from gpautotune.problems.spapt._expr import Expr, Var, add, mentions, sub
from gpautotune.problems.spapt._nest import Assign, Block, For, Stmt, subst_stmts
from gpautotune.problems.spapt._tile import TransformError
from gpautotune.problems.spapt._unroll import cleanup_start

__all__ = ["register_tile"]

_Ctx = tuple[tuple[str, str, int], ...]


def _mappings(ctx: _Ctx) -> list[dict[str, Expr]]:
    """One substitution per offset tuple, lexicographic (outermost loop slowest)."""
    out = []
    for offsets in itertools.product(*[range(r) for _, _, r in ctx]):
        out.append({v: add(Var(t), c) for (v, t, _), c in zip(ctx, offsets, strict=True)})
    return out


def _bound_depends(loop: For, ctx: _Ctx) -> bool:
    return any(mentions(loop.lo, v) or mentions(loop.hi, v) for v, _, _ in ctx)


class _RegisterTiler:
    def __init__(self, factors: Mapping[str, int], names: Mapping[str, str]) -> None:
        self.factors, self.names = factors, names

    def stmts(self, stmts: tuple[Stmt, ...], ctx: _Ctx) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        pending: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Assign) or (isinstance(s, For) and _bound_depends(s, ctx)):
                pending.append(s)
                continue
            out.extend(self._replicate(pending, ctx))
            pending = []
            if isinstance(s, For):
                out.extend(self.loop(s, ctx))
            elif isinstance(s, Block):
                out.append(Block(self.stmts(s.body, ctx)))
            else:
                out.append(s)
        out.extend(self._replicate(pending, ctx))
        return tuple(out)

    def _replicate(self, pending: list[Stmt], ctx: _Ctx) -> list[Stmt]:
        out: list[Stmt] = []
        if not pending:
            return out
        for mapping in _mappings(ctx):
            for s in subst_stmts(tuple(pending), mapping):
                if isinstance(s, For):
                    out.extend(self.loop(s, ()))
                else:
                    out.append(s)
        return out

    def loop(self, loop: For, ctx: _Ctx) -> list[Stmt]:
        r = self.factors.get(loop.var, 1)
        if r <= 1:
            return [replace(loop, body=self.stmts(loop.body, ctx))]
        if loop.step != 1:
            raise TransformError(f"cannot register-tile loop {loop.var} of step {loop.step}")
        name = self.names[loop.var]
        main = For(
            name,
            loop.lo,
            sub(loop.hi, r - 1),
            self.stmts(loop.body, (*ctx, (loop.var, name, r))),
            r,
            loop.pragmas,
            loop.role,
        )
        cleanup = replace(loop, lo=cleanup_start(loop, r), body=self.stmts(loop.body, ctx))
        return [main, cleanup]


def register_tile(
    stmts: tuple[Stmt, ...], factors: Mapping[str, int], names: Mapping[str, str]
) -> tuple[Stmt, ...]:
    """Register-tile the loops named in ``factors``; ``names[v]`` names v's main loop."""
    if all(r <= 1 for r in factors.values()):
        return stmts
    return _RegisterTiler(factors, names).stmts(stmts, ())
