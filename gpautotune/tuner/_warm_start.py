"""Warm starts from files: earlier measurements in the field's formats as trials.

:func:`import_trials` reads the format the file's suffix names:

``.csv``, ``.parquet`` (``.pq``)
    A table such as ``gpautotune export`` writes (:func:`~gpautotune.storage.import_table`):
    one column per parameter and the objective column (``value``, the tuner's value as
    the run stored it), an optional ``status`` column. Its values are taken as they are.
``.json``, ``.json.gz``
    A T4 results file (Kernel Tuner's ``store_output_file``, ``gpautotune export --t4``)
    or a Kernel Tuner cache, told apart by their keys as
    :func:`~gpautotune.storage.read_tuning_file` tells them. The file is read as the
    ``kt-cache`` problem replays it, so that its rows mean what that problem's
    evaluations mean: parameter names mapped as it maps them (``tile-size`` ->
    ``tile_size``), keys with a single level taken as constants (not needed in the
    space), failures kept as failed trials with its statuses (compile -> ``build_error``,
    runtime -> ``run_error``, constraints -> ``invalid``; a T4 ``timeout`` or
    ``correctness``), and a maximised objective (``GFLOP/s``) as ``1 / value`` with the
    recorded value in the measurement's metrics.

Which recorded field, its direction and its unit come from the problem warm-started where
it names its objective (``describe()["objective"]``: the ``kt-cache`` and own-kernel
problems do), else from the file (its own objective; a T4 file's ``metadata.direction``,
else Kernel Tuner's direction for the objective).

Units
    Kernel Tuner records times in milliseconds; the own-kernel problems (``c-kernel``,
    ``opencl-kernel``) measure seconds. A value is converted only where both the file and
    the problem state a unit and both are times (``s``, ``ms``, ``us``, ``ns``): a cache's
    ``time`` warm-starts a ``c-kernel`` in seconds (ms / 1000), and its run times (the
    samples) go with it. A unit that does not convert into the problem's (``GB/s`` for
    ``s``, ``ms`` for ``s/pixel``), whichever recorded field is read, is refused; run
    times in a unit that does not convert are left out; where either side states none, the values
    are taken as recorded (a problem that states no unit, such as a Python function,
    gets the file's numbers). A cache states Kernel Tuner's units (``ms`` for its fields
    named ``time...`` and for its run times, a throughput named as its unit); a T4 file
    the units it gives (each measurement's ``unit``, ``metadata.timeunit``), else
    Kernel Tuner's.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.measurement import Measurement
from gpautotune.problems import Problem
from gpautotune.problems.kt_cache import KtCacheProblem
from gpautotune.space import Space
from gpautotune.storage import TIME_UNITS, import_table, read_tuning_file, table_format
from gpautotune.trial import Origin, Trial
from gpautotune.tuner._checks import refuse_outside

__all__ = ["import_trials"]

_FORMATS = ".csv, .parquet (.pq), .json or .json.gz"


def import_trials(
    path: str | os.PathLike[str],
    target: Problem | Space,
    objective: str | None = None,
    *,
    direction: Literal["min", "max"] | None = None,
    unit: str | None = None,
) -> list[Trial]:
    """Earlier measurements in a CSV or Parquet table, a T4 results file or a Kernel
    Tuner cache, as warm-start trials of ``target`` (see the module docstring).

    Args:
        path: the file; its suffix names the format (``.csv``, ``.parquet``, ``.pq``,
            ``.json``, ``.json.gz``, in any case).
        target: the problem to warm-start (its space, and the objective, direction and
            units it states), or a bare space (nothing stated: the file's own).
        objective: a table's column (default ``value``), or the recorded field of a T4
            file or cache (default the problem's named objective, else the file's own).
        direction: ``min`` or ``max`` for a T4 file or cache (``max``: the trials' value
            is ``1 / recorded``); default the problem's, else the file's.
        unit: the unit ``target`` measures the objective in (``s``); default the one a
            problem states.

    Raises:
        DataNotFoundError: the file does not exist.
        ConfigError: another suffix; an unreadable file; parameters of the space the
            file lacks, or parameters it has (with several levels) that the space lacks;
            configurations outside the space (values that are not levels, broken
            constraints); an objective no record holds; a unit that does not convert into
            the problem's. Each message names the file and what to fix.
    """
    path = Path(path)
    where = f"warm-start file {str(path)!r}"
    table = table_format(path)
    if table is None and not path.name.lower().endswith((".json", ".json.gz")):
        journal = " (a journal: export a run of it with `gpautotune export`)"
        raise ConfigError(
            f"{where}: a warm start reads a CSV or Parquet table (as `gpautotune export` "
            f"writes), a T4 results file or a Kernel Tuner cache, named {_FORMATS}; "
            f"{path.suffix or 'no suffix'!r} is none of these"
            f"{journal if path.suffix.lower() in ('.db', '.sqlite') else ''}"
        )
    if not path.is_file():
        raise DataNotFoundError(f"{where} does not exist")
    problem = target if isinstance(target, Problem) else None
    space = problem.space if problem is not None else target
    if table is not None:
        trials = import_table(path, space, objective=objective or "value")
        first = 2 if table == "csv" else 1  # a CSV's header is its row 1
        refuse_outside(space, [t.config for t in trials], where, lambda i: f"row {i + first}")
        return trials
    return _records_trials(path, space, where, problem, (objective, direction, unit))


def _records_trials(
    path: Path,
    space: Space,
    where: str,
    problem: Problem | None,
    given: tuple[str | None, Literal["min", "max"] | None, str | None],
) -> list[Trial]:
    """The trials of a T4 file's or cache's rows, replayed as the kt-cache problem
    replays them, under the space's names and in the problem's units."""
    objective, direction, unit = given
    named = problem.describe().get("objective") if problem is not None else None
    records = read_tuning_file(path, objective or named)
    if problem is not None and records.objective == (named or records.objective):
        direction = direction or (problem.direction if named is not None else None)
    if problem is not None and unit is None:  # the values become the problem's, whatever
        unit = problem.objective_unit  # field is read: a unit that does not convert is refused
    try:
        replay = KtCacheProblem(records, path=str(path), direction=direction)
    except ConfigError as exc:
        raise (exc if str(path) in str(exc) else ConfigError(f"{where}: {exc}")) from None
    stated = (unit or "", problem.samples_unit if problem is not None else "")
    return _replayed(replay, space, where, stated)


def _replayed(
    replay: KtCacheProblem, space: Space, where: str, stated: tuple[str, str]
) -> list[Trial]:
    """The trials of a replayed file's rows, under the space's names and in its units
    (``stated``: the objective's and the samples' unit, ``""`` where unknown)."""
    records = replay.records
    keys = _keys(replay, space, where)
    rows = range(len(records))
    own = [{n: records.columns[k][i] for n, k in replay.original_names.items()} for i in rows]
    configs = [
        {n: records.columns[keys[n]][i] if keys[n] else replay.constants[n] for n in space.names}
        for i in rows
    ]
    refuse_outside(space, configs, where, lambda i: f"the record {configs[i]}", "records")
    configs = space.to_configs(space.to_index(configs))
    scale = _scales(replay, where, stated)
    return [
        Trial(i, config, _scaled(replay.evaluate(raw), scale, replay), origin=Origin.WARM_START)
        for i, (config, raw) in enumerate(zip(configs, own, strict=True))
    ]


def _keys(replay: KtCacheProblem, space: Space, where: str) -> dict[str, str | None]:
    """Each parameter of the space -> the file's key of its column (None: a constant of
    the file, which the replay leaves out of its space)."""
    known = [*replay.original_names, *replay.constants]
    missing = [n for n in space.names if n not in known]
    if missing:
        raise ConfigError(
            f"{where} records no values of the space's parameter(s) {missing}; it records "
            f"{known} (names that are not Python identifiers mapped as the kt-cache problem "
            "maps them: tile-size -> tile_size): warm-start from a file of this space's "
            "parameters"
        )
    extra = [n for n in replay.original_names if n not in space.names]
    if extra:
        renamed = [
            n if n == replay.original_names[n] else f"{n} ({replay.original_names[n]!r} there)"
            for n in extra
        ]
        raise ConfigError(
            f"{where} tunes parameter(s) the space lacks: {renamed} (the space has "
            f"{space.names}); its measurements depend on them, so warm-start from a file "
            "of this space's parameters, or tune a space that has them"
        )
    return {n: replay.original_names.get(n) for n in space.names}


def _scales(replay: KtCacheProblem, where: str, stated: tuple[str, str]) -> tuple[float, float]:
    """The factors turning the file's objective and samples into the problem's units."""
    records = replay.records
    recorded, samples = replay.objective_unit, replay.samples_unit  # as the file states
    factor = _factor(recorded, stated[0])
    if factor is None:
        raise ConfigError(
            f"{where} records {records.objective!r} in {recorded}, but the problem measures "
            f"its objective in {stated[0]}: warm-start from a file of the same quantity "
            "(or read another recorded field with `objective`)"
        )
    per_sample = _factor(samples, stated[1])  # samples in a unit that does not convert
    return factor, math.nan if per_sample is None else per_sample  # are left out


def _factor(recorded: str, stated: str) -> float | None:
    """What turns a value in ``recorded`` into one in ``stated``: 1 where they are the
    same or either is unknown (``""``), the ratio of two time units, else None."""
    if not recorded or not stated or recorded == stated:
        return 1.0
    if recorded in TIME_UNITS and stated in TIME_UNITS:
        return TIME_UNITS[recorded] / TIME_UNITS[stated]
    return None


def _scaled(m: Measurement, scale: tuple[float, float], replay: KtCacheProblem) -> Measurement:
    """A replayed measurement in the problem's units (the value of a maximised
    objective is a reciprocal: divided by the factor, its recorded metric multiplied)."""
    factor, per_sample = scale
    if not m.ok or m.value is None or (factor == 1.0 and per_sample == 1.0):
        return m
    metrics: dict[str, Any] = dict(m.metrics)
    if replay.direction == "max":
        value = m.value / factor
        if replay.objective in metrics:
            metrics[replay.objective] = metrics[replay.objective] * factor
    else:
        value = m.value * factor
    samples = () if math.isnan(per_sample) else tuple(s * per_sample for s in m.samples)
    return Measurement(m.status, value, samples, metrics)
