"""Arithmetic relations a set of valid configurations obeys, read from the set itself.

A space given as a list of configurations (a Kernel Tuner cache, a table of measured
rows: a :class:`~gpautotune.space.RowSet` predicate) hides the restrictions its author
wrote: the rows of Kernel Tuner's GEMM cache all satisfy ``MWG % (MDIMC * VWM) == 0``, but
the predicate the space holds is "a row of the file". :func:`valid_set_relations` finds
such relations again, with no knowledge of any kernel: among the relations of a few
shapes over the positive numeric parameters,

- ``a % b == 0`` and ``a % (b * c) == 0`` (integer levels), and
- ``m <= T`` and ``m >= T`` for ``m`` a product or quotient of two or three parameters,
  ``T`` its largest (smallest) value over the set,

it keeps those every configuration of the set satisfies, greedily, the one that rules out
the most configurations of the parameters' level grid not yet ruled out first, while the
set's own size makes the relation's holding unlikely by chance (see
:data:`MIN_EXPECTED_VIOLATIONS`). On the GEMM caches it returns the six restrictions of the
script that made them (up to the constant ``KWG``, which reads as a bound), on the
convolution caches the three, on pnpoly (a full grid) none.

The texts are what a user would have written as predicates; the GP reads the products and
quotients they name as inputs (:func:`gpautotune.surrogate.predicate_monomials`). No
library infers constraints from a set of rows (ConfigSpace and Kernel Tuner take them as
written), hence this module.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from gpautotune.space._parameters import Boolean, Ordinal
from gpautotune.space._space import Space

__all__ = ["MAX_GRID", "MIN_EXPECTED_VIOLATIONS", "positive_numeric", "valid_set_relations"]

#: Relations are looked for only when the positive numeric parameters' level grid has at
#: most this many cells (every candidate is evaluated on the grid).
MAX_GRID = 1 << 18
#: A relation is kept when, were the set's configurations spread over the grid cells not
#: yet ruled out without regard to it, at least this many would break it.
MIN_EXPECTED_VIOLATIONS = 10.0

_TOL = 1e-9


def valid_set_relations(space: Space, rows: np.ndarray) -> tuple[str, ...]:
    """The relations (expression texts) that the configurations ``rows`` (index rows of
    ``space``) all satisfy and that explain which level combinations are missing, at
    most ``space.dims``; none when fewer than two positive numeric parameters or a grid
    of more than :data:`MAX_GRID` cells."""
    names = positive_numeric(space)
    if len(names) < 2 or math.prod(space[n].n_levels for n in names) > MAX_GRID or not len(rows):
        return ()
    cols = [space.names.index(n) for n in names]
    seen = np.unique(np.asarray(rows, dtype=np.int64)[:, cols], axis=0)
    grid = Space([space[n] for n in names]).enumerate_index().astype(np.int64)
    levels = [np.asarray(space[n].levels, dtype=float) for n in names]
    on_grid = [lv[grid[:, j]] for j, lv in enumerate(levels)]
    on_seen = [lv[seen[:, j]] for j, lv in enumerate(levels)]
    candidates = list(_candidates(names, on_grid, on_seen))
    kept: list[str] = []
    allowed = np.ones(len(grid), dtype=bool)
    while candidates and len(kept) < space.dims:
        ruled_out = [int(np.sum(allowed & ~mask)) for _, mask in candidates]
        best = int(np.argmax(ruled_out))
        if len(seen) * ruled_out[best] / allowed.sum() < MIN_EXPECTED_VIOLATIONS:
            break
        text, mask = candidates.pop(best)
        kept.append(text)
        allowed &= mask
    return tuple(kept)


def positive_numeric(space: Space) -> list[str]:
    """The numeric ordinal parameters (not booleans) whose levels are all positive: those
    whose products and quotients have a logarithm."""
    return [
        p.name
        for p in space.parameters
        if isinstance(p, Ordinal)
        and not isinstance(p, Boolean)
        and np.asarray(p.levels).dtype.kind in "iuf"
        and min(p.levels) > 0
    ]


def _candidates(
    names: Sequence[str], on_grid: Sequence[np.ndarray], on_seen: Sequence[np.ndarray]
) -> Iterator[tuple[str, np.ndarray]]:
    """Each relation of the module's shapes that every seen configuration satisfies and
    some grid cell breaks, with its mask over the grid: divisibility of integer
    parameters, then the tightest bounds the seen configurations allow on products and
    quotients of two and three parameters."""
    whole = [bool(np.all(g == np.round(g))) for g in on_grid]
    d = len(names)
    for a in range(d):
        others = [b for b in range(d) if b != a and whole[b]]
        for k in (1, 2):
            for divisor in itertools.combinations(others, k) if whole[a] else ():
                if not _divides(on_seen, a, divisor).all():
                    continue
                mask = _divides(on_grid, a, divisor)
                inner = " * ".join(names[b] for b in divisor)
                if not mask.all():
                    yield f"{names[a]} % {f'({inner})' if k > 1 else inner} == 0", mask
    for k in (2, 3):
        for subset in itertools.combinations(range(d), k):
            for signs in itertools.product((1, -1), repeat=k - 1):
                powers = (1, *signs)
                grid, seen = _log(on_grid, subset, powers), _log(on_seen, subset, powers)
                pairs = list(zip(subset, powers, strict=True))
                up = " * ".join(names[j] for j, s in pairs if s > 0)
                down = "".join(f" / {names[j]}" for j, s in pairs if s < 0)
                high, low = seen.max(), seen.min()
                if high < grid.max() - _TOL:
                    yield f"{up}{down} <= {_number(math.exp(high))}", grid <= high + _TOL
                if low > grid.min() + _TOL:
                    yield f"{up}{down} >= {_number(math.exp(low))}", grid >= low - _TOL


def _divides(columns: Sequence[np.ndarray], a: int, divisor: Sequence[int]) -> np.ndarray:
    """Whether the product of the ``divisor`` columns divides column ``a``, row by row."""
    return np.mod(columns[a], np.prod([columns[b] for b in divisor], axis=0)) == 0


def _log(columns: Sequence[np.ndarray], subset: Sequence[int], powers: Sequence[int]) -> np.ndarray:
    """``log ∏ column ** power`` over ``subset``."""
    return sum(k * np.log(columns[j]) for j, k in zip(subset, powers, strict=True))


def _number(value: float) -> str:
    """``value`` as an integer when it is one (to 1e-9), else its repr."""
    return str(round(value)) if abs(value - round(value)) < 1e-9 * max(1.0, value) else repr(value)
