"""Transformation blocks ("Composite") and the fixed pipeline that applies them (spec §1.0).

A :class:`Composite` names a loop nest and the tuning parameters of its components.
Whatever the order they are written in, the components run in this order: 1 tiling
(entries in order), 2 array copy, 3 register tiling, 4 unroll-and-jam, 5 scalar
replacement, 6 OpenMP, 7 vector pragmas. Nested blocks (``@label`` slots in a nest, only
LU has one) are transformed first; the outer block then acts on their output.

A *factor* is either a parameter name (read from the configuration) or a constant.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from gpautotune.problems.spapt._arrcopy import CopyRequest, array_copy
from gpautotune.problems.spapt._expr import Ref
from gpautotune.problems.spapt._nest import Block, For, Slot, Stmt, loop_vars
from gpautotune.problems.spapt._pragmas import GCC_VECTOR, INTEL_VECTOR, add_openmp, add_vector
from gpautotune.problems.spapt._regtile import register_tile
from gpautotune.problems.spapt._scalar import scalar_replace
from gpautotune.problems.spapt._syntax import parse_expr, parse_nest
from gpautotune.problems.spapt._tile import TileEntry, TransformError, tile
from gpautotune.problems.spapt._unroll import unroll_jam
from gpautotune.space import compile_expression

__all__ = ["Composite", "ArrayCopy", "Generator", "two_level", "one_level", "Factor", "parsed_nest"]

Factor = str | int


@dataclass(frozen=True)
class ArrayCopy:
    """An array-copy entry: ``flag`` parameter, reference text, buffer-size expressions."""

    flag: str
    ref: str
    sizes: tuple[str, ...]


@dataclass(frozen=True)
class Composite:
    """One tunable loop nest and the parameters of its seven components.

    Attributes:
        nest: the loop nest in the loop language (:mod:`._syntax`).
        tiles: entries ``(targets, size, new loop name)`` applied in order.
        copies: array-copy entries.
        regtile: ``(loop, factor)`` pairs of register tiling.
        unroll: ``(loop, factor)`` pairs of unroll-and-jam (absent loops are ignored).
        scalar, vector, openmp: flags (parameter names, or 0 for "never").
        private: Orio's fixed OpenMP private list (used in Orio-compatible mode).
    """

    nest: str
    tiles: tuple[tuple[tuple[str, ...], Factor, str], ...] = ()
    copies: tuple[ArrayCopy, ...] = ()
    regtile: tuple[tuple[str, Factor], ...] = ()
    unroll: tuple[tuple[str, Factor], ...] = ()
    scalar: Factor = 0
    vector: Factor = 0
    openmp: Factor = 0
    private: str = ""

    def factors(self) -> set[str]:
        """Parameter names this block reads."""
        names = (
            {f for _, f, _ in self.tiles}
            | {f for _, f in self.regtile}
            | {f for _, f in self.unroll}
        )
        names |= {self.scalar, self.vector, self.openmp} | {c.flag for c in self.copies}
        for c in self.copies:
            for text in c.sizes:
                names |= {
                    n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)
                }
        return {n for n in names if isinstance(n, str)}


def two_level(
    *loops: tuple[str, str, str], names: Mapping[str, tuple[str, str]] | None = None
) -> tuple[tuple[tuple[str, ...], str, str], ...]:
    """Tile entries for loops ``(v, T1, T2)``: all first levels, then all second levels.

    The first level of ``v`` creates ``vv`` and the second ``vvv`` unless ``names[v]``
    gives other names (adi's ``i1`` -> ``ii``/``iii``).
    """
    names = dict(names or {})
    first = tuple(((v,), t1, names.get(v, (v * 2, v * 3))[0]) for v, t1, _ in loops)
    second = tuple(
        ((names.get(v, (v * 2, v * 3))[0], v), t2, names.get(v, (v * 2, v * 3))[1])
        for v, _, t2 in loops
    )
    return first + second


def one_level(*loops: tuple[str, str]) -> tuple[tuple[tuple[str, ...], str, str], ...]:
    """Single-level tile entries ``(v, T)`` creating loop ``vv``."""
    return tuple(((v,), t, v * 2) for v, t in loops)


@lru_cache(maxsize=256)
def parsed_nest(text: str) -> tuple[Stmt, ...]:
    return parse_nest(text)


@dataclass
class Generator:
    """Applies the blocks of one kernel to one configuration.

    Args:
        config: parameter values.
        blocks: the kernel's blocks by label.
        orio_private: use Orio's fixed OpenMP private lists instead of computed ones.
        gcc_ivdep: emit ``#pragma GCC ivdep`` instead of the Intel pragmas.
    """

    config: Mapping[str, Any]
    blocks: Mapping[str, Composite]
    orio_private: bool = False
    gcc_ivdep: bool = False
    counters: dict[str, itertools.count] = field(default_factory=dict)

    def fresh(self, prefix: str) -> str:
        counter = self.counters.setdefault(prefix, itertools.count(1))
        return f"{prefix}{next(counter)}"

    def value(self, factor: Factor) -> int:
        return int(self.config[factor]) if isinstance(factor, str) else int(factor)

    def expand(self, stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        """Replace every ``@label`` slot by the transformed block."""
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, Slot):
                if s.label not in self.blocks:
                    raise TransformError(f"unknown block @{s.label}")
                out.extend(self.apply(self.blocks[s.label]))
            elif isinstance(s, For):
                out.append(For(s.var, s.lo, s.hi, self.expand(s.body), s.step, s.pragmas, s.role))
            elif isinstance(s, Block):
                out.append(Block(self.expand(s.body)))
            else:
                out.append(s)
        return tuple(out)

    def _copy_requests(self, block: Composite) -> list[CopyRequest]:
        cols = {k: np.asarray([v]) for k, v in self.config.items()}
        out = []
        for c in block.copies:
            sizes = tuple(
                int(np.asarray(compile_expression(e, list(cols))(cols)).ravel()[0]) for e in c.sizes
            )
            ref = parse_expr(c.ref)
            if not isinstance(ref, Ref):
                raise TransformError(f"array copy needs an array reference, got {c.ref!r}")
            out.append(CopyRequest(ref, sizes, bool(self.config[c.flag])))
        return out

    def _regtile_names(self, stmts: tuple[Stmt, ...], loops: list[str]) -> dict[str, str]:
        used = set(loop_vars(stmts))
        names = {}
        for v in loops:
            name, k = f"{v}t", 2
            while name in used:
                name, k = f"{v}t{k}", k + 1
            names[v] = name
            used.add(name)
        return names

    def apply(self, block: Composite) -> tuple[Stmt, ...]:
        """The fixed pipeline on one block (nested blocks first)."""
        stmts = self.expand(parsed_nest(block.nest))
        stmts = tile(stmts, [TileEntry(t, self.value(f), n) for t, f, n in block.tiles])
        stmts, decls, buffers = array_copy(stmts, self._copy_requests(block))
        rt = {v: self.value(f) for v, f in block.regtile}
        stmts = register_tile(stmts, rt, self._regtile_names(stmts, list(rt)))
        stmts = unroll_jam(stmts, {v: self.value(f) for v, f in block.unroll})
        if self.value(block.scalar):
            stmts = scalar_replace(stmts, lambda: self.fresh("scv_"))
        if self.value(block.openmp):
            private = block.private if self.orio_private else None
            stmts = add_openmp(stmts, lambda: self.fresh("cbv_"), private=private, buffers=buffers)
        if self.value(block.vector):
            pragmas = GCC_VECTOR if self.gcc_ivdep else INTEL_VECTOR
            stmts = add_vector(stmts, lambda: self.fresh("cbv_"), pragmas=pragmas)
        return (*decls, *stmts)
