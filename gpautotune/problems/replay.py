"""Replay problems: answer from a measured table instead of measuring.

Replaying the seeds' exhaustive Laplacian measurements lets strategies be compared
exactly and quickly, without a GPU (Kernel Tuner tests its strategies the same way).
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.problems._data import find_data
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
    (``run_error``). Rows whose values are not levels of the space are counted in
    :attr:`dropped_rows` and ignored.

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
        index, keep = self._index_rows(frame, space)
        values = _numbers(frame[objective], objective)[keep]
        self.dropped_rows = int((~keep).sum())
        valid = space.valid_mask(index)
        self.rows_violating_predicates = int((~valid).sum())
        keys = space.row_keys(index)
        self._table: dict[Any, float] = dict(zip(keys.tolist(), values.tolist(), strict=True))
        self._index = index
        self._values = values
        self._valid = valid
        usable = valid & np.isfinite(values)
        if not usable.any():
            raise ConfigError(
                f"the replay table has no row inside the space with a finite {objective!r} "
                f"({len(frame)} rows, {self.dropped_rows} outside the levels, "
                f"{self.rows_violating_predicates} violating the predicates)"
            )
        best = int(np.argmin(np.where(usable, values, np.inf)))
        self.optimum = float(values[best])
        self._best = space.to_configs(index[best])[0]

    @staticmethod
    def _index_rows(frame: pd.DataFrame, space: Space) -> tuple[np.ndarray, np.ndarray]:
        index = np.zeros((len(frame), space.dims))
        keep = np.ones(len(frame), dtype=bool)
        for j, p in enumerate(space.parameters):
            uniques, inverse = np.unique(frame[p.name].to_numpy(), return_inverse=True)
            levels = np.full(len(uniques), np.nan)
            for k, value in enumerate(uniques):
                try:
                    levels[k] = p.index_of([value])[0]
                except SpaceError:
                    pass
            index[:, j] = levels[inverse]
            keep &= ~np.isnan(index[:, j])
        return index[keep], keep

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
    data: str | os.PathLike[str] | None = None, register_rule: str = "proxy"
) -> ReplayProblem:
    """The seeds' exhaustive K40c Laplacian measurements as a replay problem.

    Args:
        data: path of ``search_space.csv``; by default found in ``shared/data/`` (see
            :func:`gpautotune.problems.find_data`).
        register_rule: the register-footprint predicate (see
            :func:`~gpautotune.problems.laplacian.space.laplacian_space`).
    """
    from gpautotune.problems.laplacian.space import laplacian_space

    path = find_data(LAPLACIAN_K40C, data)
    problem = ReplayProblem(
        path, laplacian_space(register_rule), objective="time_per_pixel", name="laplacian-k40c"
    )
    problem.register_rule = register_rule
    return problem
