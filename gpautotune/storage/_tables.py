"""Tables out of and into the journal: pandas, CSV, Parquet, and CSV or Parquet warm starts."""

from __future__ import annotations

import json
import math
import numbers
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.exceptions import ConfigError, DataNotFoundError, SpaceError
from gpautotune.measurement import Measurement, Status
from gpautotune.space import Space
from gpautotune.storage._journal import Journal
from gpautotune.storage._opening import check_not_journal
from gpautotune.trial import Origin, Trial

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["trials_frame", "export_table", "import_csv", "import_table", "table_format"]

#: The table formats and the suffixes that name them.
_TABLE_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}

_FIXED = [
    "run_id",
    "problem",
    "strategy",
    "label",
    "seed",
    "number",
    "origin",
    "status",
    "value",
    "duration_s",
    "started_at",
    "error",
]

#: Columns of ``trials_frame`` that a parameter of the same name would clash with.
_RESERVED = frozenset([*_FIXED, "samples", "metrics", "info"])


def _column(name: str) -> str:
    """The column of parameter ``name``: ``param.NAME`` where a fixed column has the name
    (parameter names are identifiers, so no other column starts with ``param.``)."""
    return f"param.{name}" if name in _RESERVED else name


def trials_frame(journal: Journal, run_id: int | None = None) -> pd.DataFrame:
    """One row per trial (of one run or of all runs), configuration values as columns.

    Columns: run_id, problem, strategy, label (the run's name, empty when none), seed,
    number, origin, status, value, duration_s, started_at, error, then one column per
    parameter, then ``samples``, ``metrics`` and ``info`` as JSON strings. A parameter
    named like one of these columns (``seed``, ``value``) is in ``param.NAME``.
    """
    import pandas as pd

    runs = journal.runs() if run_id is None else [journal.get_run(run_id)]
    rows = []
    for run in runs:
        for t in journal.trials(run.id):
            m = t.measurement
            row = {
                "run_id": run.id,
                "problem": run.problem,
                "strategy": run.strategy,
                "label": run.label,
                "seed": run.seed,
                "number": t.number,
                "origin": t.origin.value,
                "status": m.status.value,
                "value": m.value,
                "duration_s": t.duration_s,
                "started_at": t.started_at,
                "error": m.error,
            }
            row.update({_column(k): v for k, v in t.config.items()})
            row.update(
                samples=json.dumps(list(m.samples)),
                metrics=json.dumps(dict(m.metrics), default=str),
                info=json.dumps(dict(t.info), default=str),
            )
            rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=_FIXED)
    return frame


def export_table(
    journal: Journal,
    path: str | os.PathLike[str],
    run_id: int | None = None,
    *,
    format: str | None = None,
) -> Path:
    """Write the trials as CSV or Parquet: ``format`` (``"csv"`` or ``"parquet"``) when
    given, whatever the file's suffix, else the format the suffix names (in any case).

    Parquet columns hold one type: a parameter column whose values are of several types
    (a choice among ``0`` and ``"auto"``, a name that runs use differently) is written
    as text there.

    Raises:
        ConfigError: no format (neither given nor named by the suffix), or ``path`` is
            the journal read (or its ``-wal``, ``-shm`` or ``-journal`` file).
    """
    check_not_journal(journal.path, path, "export")
    path = Path(path)
    if format is None:
        format = table_format(path)
        if format is None:
            raise ConfigError(f"export path {str(path)!r} must end in .csv or .parquet")
    elif format not in ("csv", "parquet"):
        raise ConfigError(f"export format {format!r} is not 'csv' or 'parquet'")
    frame = trials_frame(journal, run_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if format == "csv":
            frame.to_csv(path, index=False)
        else:
            _as_one_type(frame).to_parquet(path, index=False)
    except OSError as exc:
        kind = "CSV" if format == "csv" else "Parquet"
        raise ConfigError(
            f"cannot write the {kind} file {str(path)!r}: {exc.strerror or exc}; give another path"
        ) from None
    return path


def _as_one_type(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each column whose values are of several kinds as text."""
    frame = frame.copy()
    for name in [n for n in frame.columns if frame[n].dtype.kind == "O"]:
        values = [v for v in frame[name] if not _missing(v)]
        if len({_kind(v) for v in values}) > 1:
            frame[name] = [None if _missing(v) else str(v) for v in frame[name]]
    return frame


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _kind(value: Any) -> str:
    """``bool``, ``number`` (Parquet holds ints and floats as one) or the type's name."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    return "number" if isinstance(value, numbers.Number) else type(value).__name__


def import_csv(
    path: str | os.PathLike[str], space: Space, *, objective: str = "value"
) -> list[Trial]:
    """Earlier measurements as warm-start trials.

    The CSV has one column per parameter of ``space`` (``param.NAME`` where an export
    put it there, see ``trials_frame``) and an ``objective`` column; an optional
    ``status`` column marks failures (rows with an empty objective are failures too).
    Parameter values are read as text and matched to levels by their text (``"01"``,
    ``"NA"``), else read as numbers. Rows whose values are not levels of the space raise
    an error naming the row.
    """
    path, where = _warm_start_file(path)
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ConfigError(
            f"{where} is empty; give a header row (one column per parameter and "
            f"{objective!r}) and one row per measurement"
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where} is not UTF-8 text; save it as a UTF-8 CSV") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise ConfigError(f"{where} is not a readable CSV: {' '.join(str(exc).split())}") from None
    columns = _parameter_columns(frame, space, objective, where)
    text = pd.read_csv(path, dtype=str, keep_default_na=False, usecols=list(columns.values()))
    raw = [
        {n: space[n].from_text(words[c]) for n, c in columns.items()}
        for words in text.to_dict("records")
    ]
    return _table_trials(frame, raw, space, objective, where, first_row=2)


def import_table(
    path: str | os.PathLike[str], space: Space, *, objective: str = "value"
) -> list[Trial]:
    """Earlier measurements as warm-start trials, from a CSV or Parquet table (the format
    its suffix names: ``.csv``, ``.parquet`` or ``.pq``, in any case), such as
    :func:`export_table` writes.

    The columns are those of :func:`import_csv`. A Parquet file keeps the values' types
    (a column an export wrote as text, of values of several types, is matched to levels
    by their text as a CSV's is); its rows are numbered from 1 in messages.

    Raises:
        DataNotFoundError: the file does not exist.
        ConfigError: another suffix, an unreadable file, a missing column, or a row whose
            values are not levels of the space (the message names the row).
    """
    format = table_format(path)
    if format is None:
        raise ConfigError(
            f"table {str(path)!r} must end in .csv or .parquet (the format it is read as)"
        )
    if format == "csv":
        return import_csv(path, space, objective=objective)
    path, where = _warm_start_file(path)
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ConfigError(
            f"{where} is not a readable Parquet file ({' '.join(str(exc).split())}); give "
            "one written by `gpautotune export --parquet` or `export_table`"
        ) from None
    columns = _parameter_columns(frame, space, objective, where)
    raw = [
        {n: _cell(space[n], row[c]) for n, c in columns.items()} for row in frame.to_dict("records")
    ]
    return _table_trials(frame, raw, space, objective, where, first_row=1)


def table_format(path: str | os.PathLike[str]) -> str | None:
    """``"csv"`` or ``"parquet"``, the table format the file's suffix names (in any
    case), else None."""
    return _TABLE_SUFFIXES.get(Path(path).suffix.lower())


def _warm_start_file(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """The path, and the words naming it in messages; refused when it does not exist."""
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"warm-start file {str(path)!r} does not exist")
    return path, f"warm-start file {str(path)!r}"


def _cell(parameter: Any, value: Any) -> Any:
    """A typed table cell as a value of ``parameter``: text as a CSV cell is read."""
    if isinstance(value, str):
        return parameter.from_text(value)
    return value.item() if isinstance(value, np.generic) else value


def _parameter_columns(
    frame: pd.DataFrame, space: Space, objective: str, where: str
) -> dict[str, str]:
    """Each parameter's column (``param.NAME`` where an export put it there)."""
    columns = {n: _column(n) if _column(n) in frame.columns else n for n in space.names}
    missing = [c for c in [*columns.values(), objective] if c not in frame.columns]
    if missing:
        raise ConfigError(f"{where} lacks columns {missing}; it has {list(frame.columns)}")
    return columns


def _table_trials(
    frame: pd.DataFrame,
    raw: list[dict[str, Any]],
    space: Space,
    objective: str,
    where: str,
    *,
    first_row: int,
) -> list[Trial]:
    """The trials of a table's rows: ``raw`` holds each row's parameter values."""
    trials = []
    for i, (row, values) in enumerate(zip(frame.to_dict("records"), raw, strict=True)):
        at = f"{where}, row {i + first_row}"
        try:
            config = space.to_configs(space.to_index([values]))[0]
        except (SpaceError, ValueError) as exc:
            raise ConfigError(f"{at}: {exc}") from None
        m = _row_measurement(row, objective, at)
        trials.append(Trial(number=i, config=config, measurement=m, origin=Origin.WARM_START))
    return trials


def _row_measurement(row: dict[str, Any], objective: str, at: str) -> Measurement:
    """A row's measurement: its status (``ok`` where none is given) and value."""
    status = Status.OK
    if "status" in row and isinstance(row["status"], str):
        try:
            status = Status(row["status"])
        except ValueError:
            raise ConfigError(
                f"{at}, column 'status': {row['status']!r} is not a "
                f"status; use one of {[s.value for s in Status]} (or leave it empty)"
            ) from None
    value = row[objective]
    if status is Status.OK:
        try:
            value = None if value is None else float(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{at}, column {objective!r}: {value!r} is not a number; "
                "give a number (leave it empty for a failed measurement)"
            ) from None
        if value is None or not np.isfinite(value):
            status = Status.RUN_ERROR
    if status is Status.OK:
        return Measurement.success(float(value))
    return Measurement.failure(status, "imported")
