"""OpenMP parallel-for and vectorisation pragmas with bound hoisting (spec §1.5, §1.6).

Before a pragma is attached, a loop bound that is not a plain identifier or literal is
hoisted into a fresh ``register int cbv_N`` declared just before the loop; the
declaration and the loop are wrapped in a block so that copies made by an enclosing
unroll never redeclare a name in one scope.

* OpenMP: every *outermost* loop of the block (found through blocks, not inside loop
  bodies) gets ``omp parallel for private(...)``. The private list is either Orio's fixed
  per-kernel text or, by default, computed: every inner loop index (declared outside the
  region) and every array-copy buffer.
* Vector: every *innermost* loop (no loop in its body), array-copy loops excepted, gets
  ``ivdep`` and ``vector always`` (Intel pragmas that gcc ignores; with ``gcc_ivdep``
  ``GCC ivdep`` instead, which gcc honours and which changes the search space).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from gpautotune.problems.spapt._expr import Num, Var
from gpautotune.problems.spapt._nest import Block, Decl, For, Stmt, has_loop, loop_vars

__all__ = ["add_openmp", "add_vector", "hoist_bounds", "INTEL_VECTOR", "GCC_VECTOR"]

INTEL_VECTOR = ("ivdep", "vector always")
GCC_VECTOR = ("GCC ivdep",)


def hoist_bounds(loop: For, new_name: Callable[[], str]) -> tuple[list[Decl], For]:
    """Move complex bounds into ``register int`` temporaries declared before the loop."""
    decls: list[Decl] = []
    bounds = {}
    for field in ("lo", "hi"):
        expr = getattr(loop, field)
        if not isinstance(expr, (Var, Num)):
            name = new_name()
            decls.append(Decl("register int", (name,), init=expr))
            expr = Var(name)
        bounds[field] = expr
    return decls, replace(loop, **bounds)


def _annotated(loop: For, pragmas: Sequence[str], new_name: Callable[[], str]) -> Stmt:
    decls, loop = hoist_bounds(loop, new_name)
    loop = replace(loop, pragmas=(*pragmas, *loop.pragmas))
    return Block((*decls, loop)) if decls else loop


def add_openmp(
    stmts: tuple[Stmt, ...],
    new_name: Callable[[], str],
    *,
    private: str | None,
    buffers: Sequence[str] = (),
) -> tuple[Stmt, ...]:
    """Parallelise the outermost loops; ``private=None`` computes the private list."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, For):
            names = private if private is not None else ",".join([*loop_vars(s.body), *buffers])
            clause = f" private({names})" if names else ""
            s = _annotated(s, [f"omp parallel for{clause}"], new_name)
        elif isinstance(s, Block):
            s = Block(add_openmp(s.body, new_name, private=private, buffers=buffers))
        out.append(s)
    return tuple(out)


def add_vector(
    stmts: tuple[Stmt, ...], new_name: Callable[[], str], *, pragmas: Sequence[str] = INTEL_VECTOR
) -> tuple[Stmt, ...]:
    """Annotate every innermost loop (array-copy loops excepted)."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, For):
            if has_loop(s.body):
                s = replace(s, body=add_vector(s.body, new_name, pragmas=pragmas))
            elif s.role != "copy" and not set(pragmas) & set(s.pragmas):
                parallel = any(p.startswith("omp") for p in s.pragmas)
                keep = [p for p in pragmas if not (parallel and p.startswith("GCC"))]
                s = _annotated(s, keep, new_name) if keep else s
        elif isinstance(s, Block):
            s = Block(add_vector(s.body, new_name, pragmas=pragmas))
        out.append(s)
    return tuple(out)
