"""A predicate that admits exactly the rows of a table (a brute-forced, measured space).

A replayed table defines its own valid set: the configurations it holds. :class:`RowSet`
is that set as a constraint of a :class:`~gpautotune.space.Space`, so that sampling,
candidate pools and neighbourhoods only ever see rows of the table. It follows the
column-function protocol of :mod:`gpautotune.space._constraints` (a mapping of name to
column in, a boolean array out) and is evaluated vectorised: each column is mapped to
the position of its value among the table's values (``searchsorted``), the positions to
one mixed-radix key per row, and the keys are looked up in the table's sorted keys.
A column whose values cannot be sorted together (a categorical of ``1``, ``"auto"`` and
``2.5``) has its levels ordered numbers first, then text, and is mapped by a lookup.
It holds only arrays, so a space using it pickles (problems are sent to Dask workers).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np

__all__ = ["ROW_SET_LABEL", "RowSet"]

#: The text of a row-set constraint: ``row of FILE (N rows)`` as a replayed file labels
#: it (group 1: ``(N rows)``), or the default ``row of the table``. A stored space's
#: constraint with such a text is a set of rows, not an expression to parse.
ROW_SET_LABEL = re.compile(r"^row of (?:.+ (\([\d,]+ rows\))|the table)$")


class RowSet:
    """True for configurations whose values form a row of ``columns``.

    Args:
        columns: parameter name -> the values of every row (equal lengths), as the
            space's predicates see them (``Space.columns``: booleans as 0/1).
        label: the constraint's text (shown by ``gpautotune space``).
    """

    def __init__(self, columns: Mapping[str, np.ndarray], label: str = "row of the table") -> None:
        self.names = tuple(columns)
        self.levels: dict[str, np.ndarray] = {}
        self._lookup: dict[str, dict[object, int]] = {}  # columns of values that mix types
        for n in self.names:
            column = np.asarray(columns[n])
            try:
                self.levels[n] = np.unique(column)
            except TypeError:  # values that cannot be compared with each other
                values = sorted(set(column.tolist()), key=_order)
                self.levels[n] = np.empty(len(values), dtype=object)
                self.levels[n][:] = values
                self._lookup[n] = {v: i for i, v in enumerate(values)}
        sizes = [len(self.levels[n]) for n in self.names]
        self._radix = None
        if math.prod(sizes) < 2**62:
            self._radix = np.cumprod((1, *sizes[:0:-1]))[::-1].astype(np.int64)
        self.keys = np.unique(self._keys(columns)[0])
        self.__name__ = label

    def __repr__(self) -> str:
        return self.__name__

    def __len__(self) -> int:
        return len(self.keys)

    def _keys(self, cols: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """One key per row and a mask of rows whose every value occurs in the table."""
        first = np.asarray(cols[self.names[0]])
        n = first.shape[0] if first.ndim else 1
        positions = np.empty((n, len(self.names)), dtype=np.int64)
        known = np.ones(n, dtype=bool)
        for j, name in enumerate(self.names):
            levels = self.levels[name]
            values = np.broadcast_to(np.asarray(cols[name]), (n,))
            if name in self._lookup:
                lookup = self._lookup[name]
                pos = np.array([lookup.get(v, -1) for v in values.tolist()], dtype=np.int64)
                known &= pos >= 0
                pos = np.maximum(pos, 0)
            else:
                pos = np.minimum(np.searchsorted(levels, values), len(levels) - 1)
                known &= levels[pos] == values
            positions[:, j] = pos
        if self._radix is not None:
            return positions @ self._radix, known
        packed = np.ascontiguousarray(positions)
        return packed.view(np.dtype((np.void, 8 * len(self.names)))).ravel(), known

    def __call__(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        keys, known = self._keys(cols)
        return known & np.isin(keys, self.keys)


def _order(value: object) -> tuple[int, object]:
    """Sort key for mixed values: numbers first (by value), then the rest as text."""
    number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
    return (0, value) if number else (1, str(value))
