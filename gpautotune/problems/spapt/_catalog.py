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
from gpautotune.space import Space

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


def count_valid_by_groups(
    space: Space, *, limit: float = _ENUMERATION_LIMIT, seed: int = 0
) -> tuple[float, bool]:
    """The number of valid configurations of ``space`` and whether it is exact."""
    total, exact = 1, True
    for names in space.constraint_groups():
        sub = space.restricted(names)
        if not sub.constraints:
            total *= math.prod(p.n_levels for p in sub.parameters)
            continue
        count = sub.count_valid(limit=limit, seed=seed)
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
