"""Statements of the loop-nest representation and their C printing.

A loop nest is a tuple of immutable statements:

* :class:`Assign` — an expression statement ``target op value;``;
* :class:`For` — ``for v = lo..hi step s`` with an *inclusive* upper bound, the pragmas
  printed before it and a ``role`` (``"copy"`` for array-copy loops);
* :class:`Block` — a C compound statement (scopes the declarations inside it);
* :class:`Decl` — a declaration (loop index of an unrolled loop, scalars, hoisted bounds,
  copy buffers);
* :class:`Raw` — verbatim C;
* :class:`Slot` — where a nested transformation block is spliced in.

Transformations never mutate: they rebuild tuples with :func:`dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from gpautotune.problems.spapt._expr import Expr, Ref, fold_int, refs, substitute, to_c

__all__ = [
    "Assign",
    "For",
    "Block",
    "Decl",
    "Raw",
    "Slot",
    "Stmt",
    "subst_stmts",
    "map_assigns",
    "iter_loops",
    "has_loop",
    "stmt_refs",
    "to_lines",
    "render",
    "loop_vars",
]


@dataclass(frozen=True)
class Assign:
    """``target op value;`` with ``op`` one of ``=``, ``+=``, ``-=``, ``*=``, ``/=``.

    ``normal`` records that the statement is already in Orio's normal form (substituting
    ``v -> v + c`` keeps it so), which spares normalising it again.
    """

    target: Expr
    op: str
    value: Expr
    normal: bool = False


@dataclass(frozen=True)
class For:
    """``for (var = lo; var <= hi; var += step) body`` preceded by ``pragmas``."""

    var: str
    lo: Expr
    hi: Expr
    body: tuple[Stmt, ...]
    step: int = 1
    pragmas: tuple[str, ...] = ()
    role: str = ""

    def same_header(self, other: For) -> bool:
        """Whether two loops have textually identical headers (the jamming test)."""
        return (self.var, self.lo, self.hi, self.step, self.pragmas) == (
            other.var,
            other.lo,
            other.hi,
            other.step,
            other.pragmas,
        )


@dataclass(frozen=True)
class Block:
    """A C compound statement ``{ ... }``."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Decl:
    """``ctype names[dims] (= init);`` — ``kind="index"`` marks an unrolled loop's index."""

    ctype: str
    names: tuple[str, ...]
    init: Expr | None = None
    dims: tuple[int, ...] = ()
    kind: str = ""


@dataclass(frozen=True)
class Raw:
    """Verbatim C code."""

    text: str


@dataclass(frozen=True)
class Slot:
    """Placeholder for the nested transformation block ``label``."""

    label: str


Stmt = Assign | For | Block | Decl | Raw | Slot


# --------------------------------------------------------------------------- traversal
def subst_stmts(stmts: tuple[Stmt, ...], mapping: Mapping[str, Expr]) -> tuple[Stmt, ...]:
    """Substitute identifiers in every expression (statements, bounds, initialisers)."""
    if not mapping:
        return stmts
    return tuple(_subst(s, mapping) for s in stmts)


def _subst(s: Stmt, mapping: Mapping[str, Expr]) -> Stmt:
    if isinstance(s, Assign):
        return replace(s, target=substitute(s.target, mapping), value=substitute(s.value, mapping))
    if isinstance(s, For):
        return replace(
            s,
            lo=fold_int(substitute(s.lo, mapping)),
            hi=fold_int(substitute(s.hi, mapping)),
            body=subst_stmts(s.body, mapping),
        )
    if isinstance(s, Block):
        return Block(subst_stmts(s.body, mapping))
    if isinstance(s, Decl) and s.init is not None:
        return replace(s, init=substitute(s.init, mapping))
    return s


def map_assigns(stmts: tuple[Stmt, ...], fn: Callable[[Assign], Assign]) -> tuple[Stmt, ...]:
    """Apply ``fn`` to every expression statement, at any depth."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Assign):
            out.append(fn(s))
        elif isinstance(s, For):
            out.append(replace(s, body=map_assigns(s.body, fn)))
        elif isinstance(s, Block):
            out.append(Block(map_assigns(s.body, fn)))
        else:
            out.append(s)
    return tuple(out)


def iter_loops(stmts: tuple[Stmt, ...]) -> Iterator[For]:
    """Every loop, at any depth, outer loops first."""
    for s in stmts:
        if isinstance(s, For):
            yield s
            yield from iter_loops(s.body)
        elif isinstance(s, Block):
            yield from iter_loops(s.body)


def has_loop(stmts: tuple[Stmt, ...]) -> bool:
    """Whether any loop occurs in ``stmts`` (through blocks)."""
    return next(iter_loops(stmts), None) is not None


def stmt_refs(s: Assign) -> list[tuple[Ref, bool]]:
    """Array references of one statement as ``(ref, is_written)``, target first."""
    out: list[tuple[Ref, bool]] = []
    if isinstance(s.target, Ref):
        out.append((s.target, True))
        for sub in s.target.subs:
            out.extend((r, False) for r in refs(sub))
    else:
        out.extend((r, False) for r in refs(s.target))
    out.extend((r, False) for r in refs(s.value))
    return out


# ---------------------------------------------------------------------------- printing
def _decl_c(d: Decl) -> str:
    dims = "".join(f"[{n}]" for n in d.dims)
    init = f" = {to_c(d.init)}" if d.init is not None else ""
    return f"{d.ctype} {', '.join(n + dims for n in d.names)}{init};"


def _for_c(s: For) -> str:
    v = s.var
    step = f"{v}++" if s.step == 1 else f"{v} += {s.step}"
    return f"for ({v} = {to_c(s.lo)}; {v} <= {to_c(s.hi)}; {step}) {{"


def to_lines(stmts: tuple[Stmt, ...], indent: int = 0) -> list[str]:
    """C source lines of ``stmts``, indented by ``indent`` levels of two spaces."""
    pad = "  " * indent
    lines: list[str] = []
    for s in stmts:
        if isinstance(s, Assign):
            lines.append(f"{pad}{to_c(s.target)} {s.op} {to_c(s.value)};")
        elif isinstance(s, For):
            lines.extend(f"{pad}#pragma {p}" for p in s.pragmas)
            lines.append(pad + _for_c(s))
            lines.extend(to_lines(s.body, indent + 1))
            lines.append(pad + "}")
        elif isinstance(s, Block):
            lines.append(pad + "{")
            lines.extend(to_lines(s.body, indent + 1))
            lines.append(pad + "}")
        elif isinstance(s, Decl):
            lines.append(pad + _decl_c(s))
        elif isinstance(s, Raw):
            lines.extend(pad + line for line in s.text.splitlines())
        else:
            raise ValueError(f"unexpanded slot @{s.label} in a loop nest")
    return lines


def render(stmts: tuple[Stmt, ...], indent: int = 0) -> str:
    """C source of ``stmts`` as one string."""
    return "\n".join(to_lines(stmts, indent))


def loop_vars(stmts: tuple[Stmt, ...]) -> list[str]:
    """Names of all loop indices, first occurrence order."""
    seen: dict[str, None] = {}
    for loop in iter_loops(stmts):
        seen.setdefault(loop.var, None)
    return list(seen)
