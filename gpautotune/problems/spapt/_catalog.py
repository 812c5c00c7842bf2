"""The kernel list with factor counts and search-space sizes (spec Appendix A).

Valid sizes are computed *exactly* when possible: the constraints split the factors into
independent groups (a tile pair, an unroll triple, ...), so the number of valid
configurations is the product of each group's valid count (enumerated) and of the level
counts of unconstrained factors. A group too large to enumerate is estimated from
uniform samples instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpautotune.problems.spapt.kernels import KERNEL_NAMES, get_kernel
from gpautotune.space import Space, compile_expression

__all__ = ["KernelSummary", "list_kernels", "count_valid_by_groups"]

_ENUMERATION_LIMIT = 3e7


@dataclass(frozen=True)
class KernelSummary:
    """One row of ``gpautotune spapt list``.

    Attributes:
        name: kernel name.
        factors: number of tuning parameters (dummy and single-valued ones included).
        raw_size: product of the value-set sizes (what Orio prints, Table 12.1).
        valid_size: number of configurations satisfying every constraint (None if not computed).
        valid_exact: whether ``valid_size`` is exact (else a sampled estimate).
        table_12_1: the thesis' Table 12.1 entry (None: not in the thesis).
    """

    name: str
    factors: int
    raw_size: int
    valid_size: float | None
    valid_exact: bool
    table_12_1: str | None

    @property
    def valid_fraction(self) -> float | None:
        return None if self.valid_size is None else self.valid_size / self.raw_size


def _groups(space: Space) -> list[tuple[list[str], list[str]]]:
    """Connected groups of (parameters, constraint texts) sharing constraints."""
    parent = {n: n for n in space.names}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    uses = []
    for c in space.constraints:
        names = sorted(compile_expression(c.text, space.names).names)
        uses.append((c.text, names))
        for other in names[1:]:
            parent[find(other)] = find(names[0])
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for n in space.names:
        groups.setdefault(find(n), ([], []))[0].append(n)
    for text, names in uses:
        if names:
            groups[find(names[0])][1].append(text)
    return list(groups.values())


def count_valid_by_groups(
    space: Space, *, limit: float = _ENUMERATION_LIMIT, seed: int = 0
) -> tuple[float, bool]:
    """The number of valid configurations of ``space`` and whether it is exact."""
    total, exact = 1, True
    for names, constraints in _groups(space):
        params = [space[n] for n in names]
        if not constraints:
            total *= math.prod(p.n_levels for p in params)
            continue
        count = Space(params, constraints).count_valid(limit=limit, seed=seed)
        exact &= count.exact
        total *= int(count.estimate) if count.exact else count.estimate
    return total, exact


def list_kernels(*, valid: bool = True, limit: float = _ENUMERATION_LIMIT) -> list[KernelSummary]:
    """Every kernel with its factor count, raw size and (``valid=True``) valid size.

    Computing valid sizes enumerates each constraint group (a few seconds in total;
    tensor's five-factor unroll group is the largest).
    """
    rows = []
    for name in KERNEL_NAMES:
        kernel = get_kernel(name)
        space = kernel.space
        raw = math.prod(p.n_levels for p in space.parameters)
        count, exact = count_valid_by_groups(space, limit=limit) if valid else (None, False)
        rows.append(KernelSummary(name, space.dims, raw, count, exact, kernel.table_12_1))
    return rows
