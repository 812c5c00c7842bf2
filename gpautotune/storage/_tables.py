"""Tables out of and into the journal: pandas, CSV, Parquet, and CSV warm starts."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gpautotune.exceptions import ConfigError, DataNotFoundError, SpaceError
from gpautotune.measurement import Measurement, Status
from gpautotune.space import Space
from gpautotune.storage._journal import Journal
from gpautotune.trial import Origin, Trial

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["trials_frame", "export_table", "import_csv"]

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


def trials_frame(journal: Journal, run_id: int | None = None) -> pd.DataFrame:
    """One row per trial (of one run or of all runs), configuration values as columns.

    Columns: run_id, problem, strategy, label (the run's name, empty when none), seed,
    number, origin, status, value, duration_s, started_at, error, then one column per
    parameter, then ``samples``, ``metrics`` and ``info`` as JSON strings.
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
            row.update({f"{k}": v for k, v in t.config.items() if k not in row})
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
    given, whatever the file's suffix, else the format the suffix names."""
    path = Path(path)
    if format is None:
        format = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(path.suffix)
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
            frame.to_parquet(path, index=False)
    except OSError as exc:
        kind = "CSV" if format == "csv" else "Parquet"
        raise ConfigError(
            f"cannot write the {kind} file {str(path)!r}: {exc.strerror or exc}; give another path"
        ) from None
    return path


def import_csv(
    path: str | os.PathLike[str], space: Space, *, objective: str = "value"
) -> list[Trial]:
    """Earlier measurements as warm-start trials.

    The CSV has one column per parameter of ``space`` and an ``objective`` column; an
    optional ``status`` column marks failures (rows with an empty objective are failures
    too). Rows whose values are not levels of the space raise an error naming the row.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"warm-start file {str(path)!r} does not exist")
    import pandas as pd

    where = f"warm-start file {str(path)!r}"
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
    missing = [c for c in [*space.names, objective] if c not in frame.columns]
    if missing:
        raise ConfigError(f"{where} lacks columns {missing}; it has {list(frame.columns)}")
    trials = []
    for i, row in enumerate(frame.to_dict("records")):
        raw = {n: row[n] for n in space.names}
        try:
            config = space.to_configs(space.to_index([raw]))[0]
        except SpaceError as exc:
            raise ConfigError(f"{where}, row {i + 2}: {exc}") from None
        status = Status.OK
        if "status" in row and isinstance(row["status"], str):
            try:
                status = Status(row["status"])
            except ValueError:
                raise ConfigError(
                    f"{where}, row {i + 2}, column 'status': {row['status']!r} is not a "
                    f"status; use one of {[s.value for s in Status]} (or leave it empty)"
                ) from None
        value = row[objective]
        if status is Status.OK:
            try:
                value = None if value is None else float(value)
            except (TypeError, ValueError):
                raise ConfigError(
                    f"{where}, row {i + 2}, column {objective!r}: {value!r} is not a number; "
                    "give a number (leave it empty for a failed measurement)"
                ) from None
            if value is None or not np.isfinite(value):
                status = Status.RUN_ERROR
        m = (
            Measurement.success(float(value))
            if status is Status.OK
            else Measurement.failure(status, "imported")
        )
        trials.append(Trial(number=i, config=config, measurement=m, origin=Origin.WARM_START))
    return trials
