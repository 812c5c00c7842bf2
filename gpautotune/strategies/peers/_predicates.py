"""The space's predicates as tables over the parameters each one reads.

A peer that takes constraints in its own terms (SMAC3's forbidden clauses, Kernel
Tuner's restrictions over named parameters) gets each predicate as the set of level
combinations of the parameters it reads: ``"lws_y <= threads_number"`` reads two
parameters, so it is the 66 combinations of their levels, split into allowed and
forbidden. A predicate whose parameters are hidden (a Python callable, e.g. a membership
test against a measured table) or whose parameters have too many joint levels cannot be
tabulated; the adapters then leave it to the fair-accounting rule (a proposal that
violates it is refused without spending budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpautotune.space import Space

__all__ = ["PredicateTable", "predicate_tables", "DEFAULT_TABLE_LIMIT"]

#: Most joint level combinations a predicate's parameters may have to be tabulated.
DEFAULT_TABLE_LIMIT = 200_000


@dataclass(frozen=True)
class PredicateTable:
    """One predicate tabulated over the parameters it reads.

    Attributes:
        text: the predicate as written in the space.
        names: the parameters it reads, in space order.
        allowed: the value tuples (over ``names``) that satisfy it.
        forbidden: the value tuples that violate it.
    """

    text: str
    names: tuple[str, ...]
    allowed: frozenset[tuple]
    forbidden: tuple[tuple, ...]


def predicate_tables(
    space: Space, limit: int = DEFAULT_TABLE_LIMIT
) -> tuple[list[PredicateTable], list[str]]:
    """Tabulate every predicate that can be.

    Args:
        space: a discrete space.
        limit: the most joint level combinations a tabulated predicate may read.

    Returns:
        The tables, and the texts of the predicates left untabulated (hidden inputs or
        more than ``limit`` combinations).
    """
    tables, left = [], []
    for constraint in space.constraints:
        names = space.constraint_inputs(constraint)
        if names is None or not names:
            left.append(constraint.text)
            continue
        columns = [space.names.index(n) for n in names]
        shape = [space.parameters[j].n_levels for j in columns]
        if math.prod(shape) > limit:
            left.append(constraint.text)
            continue
        combos = np.stack(np.unravel_index(np.arange(math.prod(shape)), shape), axis=1)
        index = np.zeros((len(combos), space.dims))
        index[:, columns] = combos
        ok = constraint.mask(space.columns(index))
        values = [
            space.parameters[j].values_at(combos[:, k]).tolist() for k, j in enumerate(columns)
        ]
        rows = list(zip(*values, strict=True))
        tables.append(
            PredicateTable(
                constraint.text,
                tuple(names),
                frozenset(r for r, good in zip(rows, ok, strict=True) if good),
                tuple(r for r, good in zip(rows, ok, strict=True) if not good),
            )
        )
    return tables, left
