"""Scalar replacement (spec §1.4): purely textual, no alias or dependence analysis.

Bottom-up over the nest, every array reference of every expression statement is recorded
by its text with its number of occurrences and whether it is ever written. At a loop
with index ``v``, the references whose text mentions ``v`` are resolved: those occurring
more than once become scalars declared (``double``, at most 8 per declaration) and loaded
at the top of the loop body, replaced in the body, and stored back at its end when
written; those occurring once are left alone. Other references pass up to the enclosing
loop, so an invariant reference is hoisted to the loop where its subscript last varies.
References still pending at the top with more than one occurrence get scalars around the
whole statement list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from gpautotune.problems.spapt._expr import Expr, Ref, Var, map_expr, mentions, ref_text
from gpautotune.problems.spapt._nest import Assign, Block, Decl, For, Stmt, map_assigns, stmt_refs

__all__ = ["scalar_replace"]

_PER_DECL = 8


@dataclass
class _Use:
    ref: Ref
    count: int = 0
    written: bool = False


_Pending = dict[str, _Use]


def _merge(into: _Pending, other: _Pending) -> None:
    for key, use in other.items():
        mine = into.setdefault(key, _Use(use.ref))
        mine.count += use.count
        mine.written |= use.written


class _ScalarReplacer:
    def __init__(self, new_name: Callable[[], str]) -> None:
        self.new_name = new_name

    def stmts(self, stmts: tuple[Stmt, ...]) -> tuple[tuple[Stmt, ...], _Pending]:
        pending: _Pending = {}
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Assign):
                for ref, written in stmt_refs(s):
                    use = pending.setdefault(ref_text(ref), _Use(ref))
                    use.count += 1
                    use.written |= written
            elif isinstance(s, For):
                s, inner = self.loop(s)
                _merge(pending, inner)
            elif isinstance(s, Block):
                body, inner = self.stmts(s.body)
                s = Block(body)
                _merge(pending, inner)
            out.append(s)
        return tuple(out), pending

    def loop(self, loop: For) -> tuple[For, _Pending]:
        body, pending = self.stmts(loop.body)
        here = [u for u in pending.values() if mentions(u.ref, loop.var)]
        up = {k: u for k, u in pending.items() if not mentions(u.ref, loop.var)}
        return replace(loop, body=self.wrap(body, [u for u in here if u.count > 1])), up

    def wrap(self, body: tuple[Stmt, ...], uses: list[_Use]) -> tuple[Stmt, ...]:
        """Declare, load, replace and store back the scalars of ``uses`` around ``body``."""
        if not uses:
            return body
        names = {ref_text(u.ref): self.new_name() for u in uses}
        decls = [
            Decl("double", tuple(list(names.values())[k : k + _PER_DECL]))
            for k in range(0, len(names), _PER_DECL)
        ]
        loads = [Assign(Var(names[ref_text(u.ref)]), "=", u.ref) for u in uses]
        stores = [Assign(u.ref, "=", Var(names[ref_text(u.ref)])) for u in uses if u.written]

        def swap(e: Expr) -> Expr | None:
            return Var(names[ref_text(e)]) if isinstance(e, Ref) and ref_text(e) in names else None

        replaced = map_assigns(
            body,
            lambda s: replace(s, target=map_expr(s.target, swap), value=map_expr(s.value, swap)),
        )
        return (*decls, *loads, *replaced, *stores)


def scalar_replace(stmts: tuple[Stmt, ...], new_name: Callable[[], str]) -> tuple[Stmt, ...]:
    """Scalar-replace a block's statements; ``new_name()`` gives fresh scalar names."""
    replacer = _ScalarReplacer(new_name)
    body, pending = replacer.stmts(stmts)
    top = [u for u in pending.values() if u.count > 1]
    if not top:
        return body
    return (Block(replacer.wrap(body, top)),)
