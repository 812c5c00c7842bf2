"""Loop tiling as Orio does it: in-place strip-mining, one or two levels (spec §1.1).

A tile entry ``(v, T, w)`` replaces every loop ``for v = L..U step s`` by

    for w = L..U step T
        for v = w..min(U, w + T - s) step s
            body

*at the same position in the nest*: tile loops are never hoisted outward, so the
iteration order (and the result) is exactly the original one. A two-level entry names
``(ii, i)``: it tiles loop ``ii`` when it exists (the first level was applied),
otherwise loop ``i``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpautotune.problems.spapt._expr import Call, Var, add
from gpautotune.problems.spapt._nest import Block, For, Stmt, iter_loops

__all__ = ["TileEntry", "TransformError", "tile", "strip_mine"]


class TransformError(ValueError):
    """A transformation cannot be applied (Orio reports an error: cost +inf)."""


@dataclass(frozen=True)
class TileEntry:
    """Tile the first existing loop of ``targets`` by ``size`` with new loop ``name``."""

    targets: tuple[str, ...]
    size: int
    name: str


def strip_mine(loop: For, size: int, name: str) -> For:
    """The two loops that replace ``loop`` (``size`` a multiple of its step, > step)."""
    if size % loop.step:
        raise TransformError(
            f"tile size {size} of loop {loop.var} is not a multiple of its step {loop.step} "
            "(iterations would be skipped)"
        )
    inner = For(
        loop.var,
        Var(name),
        Call("min", (loop.hi, add(Var(name), size - loop.step))),
        loop.body,
        loop.step,
        role=loop.role,
    )
    return For(name, loop.lo, loop.hi, (inner,), size, role=loop.role)


def _tile_stmts(stmts: tuple[Stmt, ...], target: str, size: int, name: str) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, For):
            s = replace(s, body=_tile_stmts(s.body, target, size, name))
            if s.var == target and size > s.step:
                s = strip_mine(s, size, name)
        elif isinstance(s, Block):
            s = Block(_tile_stmts(s.body, target, size, name))
        out.append(s)
    return tuple(out)


def tile(stmts: tuple[Stmt, ...], entries: Sequence[TileEntry]) -> tuple[Stmt, ...]:
    """Apply tile entries in order; sizes of 1 (or not above the loop step) are no-ops.

    Raises:
        TransformError: no loop of an entry's targets exists, or a size is not a multiple
            of the step of the loop it tiles.
    """
    for entry in entries:
        names = {loop.var for loop in iter_loops(stmts)}
        target = next((t for t in entry.targets if t in names), None)
        if target is None:
            raise TransformError(f"tiling names no existing loop among {entry.targets}")
        if entry.size > 1:
            stmts = _tile_stmts(stmts, target, entry.size, entry.name)
    return stmts
