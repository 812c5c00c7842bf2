"""Array copy (spec §1.7; atax and mvt).

For a reference ``X[...]`` with buffer sizes ``[s1, ...]``: when the flag is off or a size
is 1, only a dummy ``double X_copy;`` is declared. Otherwise, starting from the innermost
loop that binds the reference's last index, loops are collected outwards (those whose
index occurs in the reference) until a loop whose index occurs in the bounds of a
collected loop: the controlling tile loop. At the top of its body a copy-in nest over the
collected loops fills ``X_copy[v - lo(v)]``, the reference is replaced by the buffer in
the body, and a copy-out nest follows when the reference is written. Only collected
loops give buffer dimensions, so strip-mined mvt gets a one-dimensional buffer over j.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpautotune.problems.spapt._expr import (
    Bin,
    Expr,
    Ref,
    Var,
    fold_int,
    map_expr,
    mentions,
    to_c,
    variables,
)
from gpautotune.problems.spapt._nest import Assign, Block, Decl, For, Stmt, map_assigns, stmt_refs
from gpautotune.problems.spapt._tile import TransformError

__all__ = ["CopyRequest", "array_copy"]


@dataclass(frozen=True)
class CopyRequest:
    """One resolved array-copy entry: the reference, its buffer sizes, and the flag."""

    ref: Ref
    sizes: tuple[int, ...]
    active: bool

    @property
    def buffer(self) -> str:
        return self.ref.name + "_copy"


def _refers(stmts: tuple[Stmt, ...], key: str) -> tuple[bool, bool]:
    """Whether a reference with text ``key`` occurs in ``stmts``, and whether it is written."""
    found = written = False
    for s in stmts:
        if isinstance(s, Assign):
            for ref, w in stmt_refs(s):
                if to_c(ref) == key:
                    found, written = True, written or w
        elif isinstance(s, (For, Block)):
            f, w = _refers(s.body, key)
            found, written = found or f, written or w
    return found, written


class _Copier:
    def __init__(self, request: CopyRequest) -> None:
        self.req = request
        self.key = to_c(request.ref)
        last = request.ref.subs[-1]
        names = sorted(variables(last))
        if len(names) != 1:
            raise TransformError(f"array copy of {self.key}: the last subscript must use one index")
        self.last = names[0]
        self.dims: tuple[int, ...] | None = None

    def visit(self, stmts: tuple[Stmt, ...]) -> tuple[tuple[Stmt, ...], list[list[For]]]:
        out: list[Stmt] = []
        requests: list[list[For]] = []
        for s in stmts:
            if isinstance(s, Block):
                body, inner = self.visit(s.body)
                out.append(Block(body))
                requests.extend(inner)
            elif isinstance(s, For):
                s, inner = self.loop(s)
                out.append(s)
                requests.extend(inner)
            else:
                out.append(s)
        return tuple(out), requests

    def loop(self, loop: For) -> tuple[For, list[list[For]]]:
        body, inner = self.visit(loop.body)
        loop = replace(loop, body=body)
        pending: list[list[For]] = []
        for collected in inner:
            if any(mentions(c.lo, loop.var) or mentions(c.hi, loop.var) for c in collected):
                loop = self.insert(loop, collected)
            elif mentions(self.req.ref, loop.var):
                pending.append([loop, *collected])
            else:
                pending.append(collected)
        if loop.var == self.last and not inner and _refers(loop.body, self.key)[0]:
            pending.append([loop])
        return loop, pending

    def insert(self, control: For, collected: list[For]) -> For:
        """Copy in (and out) around ``control``'s body; the buffer indexes ``v - lo(v)``."""
        index = tuple(fold_int(Bin("-", Var(c.var), c.lo)) for c in collected)
        buffer = Ref(self.req.buffer, index)
        dims = []
        for c in collected:
            pos = next(k for k, s in enumerate(self.req.ref.subs) if mentions(s, c.var))
            dims.append(self.req.sizes[min(pos, len(self.req.sizes) - 1)])
        self.dims = tuple(dims)

        def nest(stmt: Assign) -> For:
            inner: Stmt = stmt
            for c in reversed(collected):
                inner = For(c.var, c.lo, c.hi, (inner,), c.step, role="copy")
            return inner  # type: ignore[return-value]

        def swap(e: Expr) -> Expr | None:
            return buffer if isinstance(e, Ref) and to_c(e) == self.key else None

        _, written = _refers(control.body, self.key)
        body = map_assigns(
            control.body,
            lambda s: replace(s, target=map_expr(s.target, swap), value=map_expr(s.value, swap)),
        )
        copy_in = nest(Assign(buffer, "=", self.req.ref))
        copy_out = [nest(Assign(self.req.ref, "=", buffer))] if written else []
        return replace(control, body=(copy_in, *body, *copy_out))


def array_copy(
    stmts: tuple[Stmt, ...], requests: Sequence[CopyRequest]
) -> tuple[tuple[Stmt, ...], list[Decl], list[str]]:
    """Apply array copies; returns the statements, the buffer declarations and buffer names."""
    decls: list[Decl] = []
    buffers: list[str] = []
    for req in requests:
        if not req.active or any(size == 1 for size in req.sizes):
            decls.append(Decl("double", (req.buffer,)))
            continue
        copier = _Copier(req)
        stmts, left = copier.visit(stmts)
        if left or copier.dims is None:
            raise TransformError(f"array copy of {to_c(req.ref)}: no controlling tile loop")
        decls.append(Decl("double", (req.buffer,), dims=copier.dims))
        buffers.append(req.buffer)
    return stmts, decls, buffers
