"""Replay problems: answer from a measured table instead of measuring.

Replaying the seeds' exhaustive Laplacian measurements lets strategies be compared
exactly and quickly, without a GPU (Kernel Tuner tests its strategies the same way).
"""

from __future__ import annotations

import hashlib
import os
import warnings
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.problems._data import find_data
from gpautotune.problems.input_files import InputFile
from gpautotune.space import Config, Space

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ReplayProblem", "laplacian_replay", "table_digest", "LAPLACIAN_K40C"]

LAPLACIAN_K40C = "laplacian-k40c/search_space.csv"


def _read_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A CSV table; a JSON file (a Kernel Tuner cache, a T4 file) is pointed to ``kt-cache``."""
    with open(path, "rb") as fh:
        head = fh.read(2)
    if str(path).endswith((".json", ".json.gz")) or head[:1] in (b"{", b"["):
        raise ConfigError(
            f"{path} is JSON, not a CSV table; replay a Kernel Tuner cache or T4 results file "
            f"with `problem: {{name: kt-cache, path: {path}}}`"
        )
    import pandas as pd  # imported here: pandas is not needed to import the package

    try:
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        raise ConfigError(f"{path}: not a readable CSV table ({str(exc)[:200]})") from None


def _level_of(param: Any, value: Any) -> tuple[float, str]:
    """The level index of a CSV cell (NaN if none) and, when none, why.

    A cell that is not a level as read (pandas reads a column holding ``1`` and ``auto``
    as text) matches the level written the same way."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return np.nan, "the value is empty"
    if isinstance(value, np.generic):
        value = value.item()
    try:
        return float(param.index_of([value])[0]), ""
    except (SpaceError, ValueError, TypeError) as exc:
        reason = str(exc)
    text = value if isinstance(value, str) else str(value)
    try:
        return float(param.index_of([param.from_text(text)])[0]), ""
    except (SpaceError, ValueError, TypeError):
        return np.nan, reason


def table_digest(*columns: np.ndarray) -> str:
    """SHA-256 of a table's columns (their types, shapes and bytes), as ``sha256:<hex>``."""
    h = hashlib.sha256()
    for column in columns:
        column = np.ascontiguousarray(column)
        h.update(f"{column.dtype.str}{column.shape}".encode())
        h.update(column.tobytes() if column.dtype != object else repr(column.tolist()).encode())
    return f"sha256:{h.hexdigest()}"


def _numbers(column: pd.Series, name: str) -> np.ndarray:
    """A column as floats (empty cells NaN); text that is not a number is refused."""
    import pandas as pd

    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(np.isnan(values) & column.notna().to_numpy())
    if len(bad):
        rows = ", ".join(str(i + 2) for i in bad[:5])
        raise ConfigError(
            f"column {name!r} of the replay table holds text that is not a number "
            f"({column.iloc[bad[0]]!r} in line {bad[0] + 2}; lines {rows}"
            f"{' ...' if len(bad) > 5 else ''}): leave failed rows empty"
        )
    return values


class ReplayProblem(Problem):
    """A problem answered from a table with one column per parameter and an objective.

    Configurations absent from the table, or that violate the space's predicates, are
    ``invalid``; rows whose objective is empty, NaN or infinite are failed measurements
    (``run_error``). A cell whose type differs from its level's (the text ``1`` of a
    column that also holds ``auto``, for the level ``1``) matches the level written so.
    Rows whose values are not levels of the space (or are empty) are counted in
    :attr:`dropped_rows`, the first described in :attr:`first_dropped`, and ignored with
    a warning; a row that repeats an earlier configuration is left out with a warning
    (the first is kept, as ``kt-cache`` keeps it) and counted in :attr:`duplicate_rows`.

    Args:
        table: a DataFrame or the path of a CSV file.
        space: the search space; its parameter names must be columns of the table.
        objective: the column to minimise.
        name: a label for storage and reports.

    Raises:
        ConfigError: missing columns, an objective that is not numeric, or no row of the
            space with a finite objective.
    """

    def __init__(
        self,
        table: pd.DataFrame | str | os.PathLike[str],
        space: Space,
        *,
        objective: str,
        name: str = "replay",
    ) -> None:
        import pandas as pd

        self.source = None if isinstance(table, pd.DataFrame) else str(table)
        frame = table if isinstance(table, pd.DataFrame) else _read_csv(table)
        missing = [c for c in [*space.names, objective] if c not in frame.columns]
        if missing:
            shown = [str(c)[:40] for c in frame.columns[:20]]
            more = f" and {len(frame.columns) - 20} more" if len(frame.columns) > 20 else ""
            raise ConfigError(f"the replay table lacks columns {missing}; it has {shown}{more}")
        self.space, self.name, self.objective = space, name, objective
        where = self.source or "the replay table"
        index, keep, self.first_dropped = self._index_rows(frame, space)
        values = _numbers(frame[objective], objective)[keep]
        self.dropped_rows = int((~keep).sum())
        if self.dropped_rows:
            warnings.warn(
                f"{self.dropped_rows} of {len(frame)} rows of {where} are left out, their "
                f"values not being levels of the space (e.g. {self.first_dropped})",
                stacklevel=2,
            )
        index, values = self._drop_duplicates(index, values, np.flatnonzero(keep), where)
        valid = space.valid_mask(index)
        self.rows_violating_predicates = int((~valid).sum())
        keys = space.row_keys(index)
        self._table: dict[Any, float] = dict(zip(keys.tolist(), values.tolist(), strict=True))
        self._index = index
        self._values = values
        self._valid = valid
        usable = valid & np.isfinite(values)
        if not usable.any():
            first = f"; {self.first_dropped}" if self.first_dropped else ""
            raise ConfigError(
                f"the replay table has no row inside the space with a finite {objective!r} "
                f"({len(frame)} rows, {self.dropped_rows} outside the levels, "
                f"{self.rows_violating_predicates} violating the predicates){first}"
            )
        best = int(np.argmin(np.where(usable, values, np.inf)))
        self.optimum = float(values[best])
        self._best = space.to_configs(index[best])[0]

    def _drop_duplicates(
        self, index: np.ndarray, values: np.ndarray, rows: np.ndarray, where: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """The rows without those repeating an earlier configuration (warned about)."""
        keys = self.space.row_keys(index)
        _, first = np.unique(keys, return_index=True)
        self.duplicate_rows = len(keys) - len(first)
        if not self.duplicate_rows:
            return index, values
        kept = np.zeros(len(keys), dtype=bool)
        kept[first] = True
        repeat = int(np.flatnonzero(~kept)[0])
        lines = ", ".join(str(int(r) + 2) for r in rows[keys == keys[repeat]][:5])
        config = self.space.to_configs(index[repeat])[0]
        warnings.warn(
            f"{self.duplicate_rows} rows of {where} repeat an earlier configuration and are "
            f"left out, the first kept (e.g. {config} in lines {lines})",
            stacklevel=3,
        )
        return index[kept], values[kept]

    @staticmethod
    def _index_rows(frame: pd.DataFrame, space: Space) -> tuple[np.ndarray, np.ndarray, str | None]:
        """Level indices of the rows whose values are all levels, the mask of those rows,
        and what is wrong with the first other row (None when every row is kept)."""
        import pandas as pd

        index = np.zeros((len(frame), space.dims))
        keep = np.ones(len(frame), dtype=bool)
        first: tuple[int, str] | None = None
        for j, p in enumerate(space.parameters):
            column = frame[p.name]
            inverse, uniques = pd.factorize(column.to_numpy(), use_na_sentinel=False)
            levels = np.full(len(uniques), np.nan)
            reasons: dict[int, str] = {}
            for k, value in enumerate(uniques):
                levels[k], reasons[k] = _level_of(p, value)
            index[:, j] = levels[inverse]
            bad = np.flatnonzero(np.isnan(index[:, j]))
            if len(bad) and (first is None or bad[0] < first[0]):
                row = int(bad[0])
                first = (row, f"column {p.name!r}, line {row + 2}: {reasons[inverse[row]]}")
            keep &= ~np.isnan(index[:, j])
        return index[keep], keep, None if first is None else first[1]

    @property
    def table_size(self) -> int:
        return len(self._table)

    def measured_values(self, valid_only: bool = True) -> np.ndarray:
        """Objective values of the table's rows (the valid ones by default)."""
        return self._values[self._valid] if valid_only else self._values.copy()

    def evaluate(self, config: Config) -> Measurement:
        try:
            index = self.space.to_index([config])
        except SpaceError as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        if not self.space.valid_mask(index)[0]:
            return Measurement.failure(Status.INVALID, f"violates {self.space.violated(config)}")
        value = self._table.get(self.space.row_keys(index)[0].item())
        if value is None:
            return Measurement.failure(
                Status.INVALID, "configuration absent from the measured table"
            )
        if not np.isfinite(value):
            return Measurement.failure(
                Status.RUN_ERROR, f"the table records {value} for {self.objective!r}"
            )
        return Measurement.success(value, samples=(value,))

    def best_known(self) -> Config:
        return dict(self._best)

    def data_digest(self) -> str:
        """The digest of the replayed rows (configurations and values)."""
        return table_digest(self._index, self._values)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "objective": self.objective}


def laplacian_replay(
    data: Annotated[str | os.PathLike[str] | None, InputFile()] = None,
    register_rule: str = "proxy",
    label: str = "laplacian-k40c",
) -> ReplayProblem:
    """The seeds' exhaustive K40c Laplacian measurements as a replay problem, or another
    device's table of the same kernel in their format (``benchmarks/laplacian_table.py``).

    Args:
        data: path of ``search_space.csv`` (or of another device's table); by default
            found in ``shared/data/`` (see :func:`gpautotune.problems.find_data`).
        register_rule: the register-footprint predicate (see
            :func:`~gpautotune.problems.laplacian.space.laplacian_space`).
        label: the problem's name in journals and reports; name another device's table
            after its device.
    """
    from gpautotune.problems.laplacian.space import laplacian_space

    if not isinstance(label, str) or not label.strip():
        raise ConfigError(f"laplacian-replay: label must be a non-empty text, not {label!r}")
    path = find_data(LAPLACIAN_K40C, data)
    problem = ReplayProblem(
        path, laplacian_space(register_rule), objective="time_per_pixel", name=label
    )
    problem.register_rule = register_rule
    problem.objective_unit = problem.samples_unit = "s/pixel"  # the table's time_per_pixel
    return problem
