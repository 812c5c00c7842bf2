"""The field's exchange format out: a run's trials as a T4 results file.

T4 ("Open Autotuning Results Schema", version 1.0.0, the format Kernel Tuner writes with
``store_output_file``) lists one entry per evaluated configuration: ``configuration``,
``invalidity``, ``correctness``, ``measurements`` and ``times.runtimes``. The schema is
vendored with its Apache-2.0 licence in ``gpautotune/storage/schemas/T4/``; validating
against it needs ``jsonschema`` (the ``dev`` extra), exporting does not.

Configurations are written under the names of the problem's source file, constants
included, when the run's problem recorded them (the ``kt-cache`` problem does), so that
an export of a replayed Kernel Tuner cache reads back as the same space; their keys come
in the space's parameter order (constants last). ``measurements`` holds the objective
and every numeric metric the trial recorded: the objective with the unit its problem
stated (``Problem.objective_unit``, stored with the run), a metric with the unit its name
states (:func:`metric_unit`). ``metadata`` (free-form in the schema) holds ``timeunit``
(``Problem.samples_unit``), the ``objective`` and its ``direction`` (``Problem.direction``),
``tune_params_keys`` and ``tune_params`` (the levels in the space's order) and the run's
identity under ``gpautotune``. A run stored before problems' statements were kept is
described as it was then (:func:`_inferred`).
"""

from __future__ import annotations

import datetime
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.storage._journal import Journal, RunRecord
from gpautotune.storage._kernel_tuner import (
    HIGHER_IS_BETTER,
    MARKERS,
    STATUS_INVALIDITY,
    TIME_WORDS,
)
from gpautotune.storage._objective import RunObjective
from gpautotune.storage._opening import check_not_journal
from gpautotune.trial import Trial

__all__ = [
    "t4_document",
    "export_t4",
    "validate_t4",
    "t4_schema",
    "metric_unit",
    "kernel_tuner_unit",
    "T4_VERSION",
]

T4_VERSION = "1.0.0"
#: The Kernel Tuner error marker written as the objective of a failed trial.
_MARKER_OF = {"invalid": "InvalidConfig", "build_error": "CompilationFailedConfig"}


def t4_schema() -> dict[str, Any]:
    """The vendored T4 results schema (a JSON Schema, draft 2020-12)."""
    folder = resources.files("gpautotune.storage") / "schemas" / "T4" / T4_VERSION
    return json.loads((folder / "results-schema.json").read_text())


def validate_t4(document: dict[str, Any]) -> None:
    """Check a T4 document against the schema.

    Raises:
        ConfigError: the document does not conform (the message names where), or
            ``jsonschema`` is not installed.
    """
    try:
        import jsonschema
    except ImportError:
        raise ConfigError(
            "validating T4 needs the jsonschema package: pip install 'gpautotune[dev]'"
        ) from None
    try:
        jsonschema.validate(document, t4_schema())
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "the top level"
        raise ConfigError(f"not a valid T4 results document at {where}: {exc.message}") from None


def _choose_run(journal: Journal, run_id: int | None) -> RunRecord:
    if run_id is not None:
        return journal.get_run(run_id)
    runs = journal.runs()
    if not runs:
        raise ConfigError(f"{journal.path} holds no run to export; tune into it first")
    if len(runs) != 1:
        raise ConfigError(
            f"{journal.path} holds {len(runs)} runs; a T4 file holds one: choose it with --run "
            "(`gpautotune show` lists them)"
        )
    return runs[0]


#: Metrics whose name is their unit: Kernel Tuner's throughput objectives (a kernel
#: file's metrics are often named so too).
_UNIT_NAMES = frozenset(name for name in HIGHER_IS_BETTER if "/" in name)
#: gpautotune's own metrics by the ending of their names (``time_s``, ``compile_s``,
#: ``copy_bandwidth_Bps``), and by name where the name does not say it.
_SUFFIX_UNITS = (("_s", "s"), ("_Bps", "B/s"))
_NAMED_UNITS = {"time_per_pixel_by_size": "s/pixel"}


def metric_unit(name: str) -> str:
    """The unit the name of the metric ``name`` states (``""`` where it states none):
    a throughput named as its unit (``GB/s``), ``..._s`` seconds, ``..._Bps`` B/s."""
    if name in _UNIT_NAMES:
        return name
    if name in _NAMED_UNITS:
        return _NAMED_UNITS[name]
    return next((unit for end, unit in _SUFFIX_UNITS if name.endswith(end)), "")


def kernel_tuner_unit(name: str) -> str:
    """The unit of a field Kernel Tuner records: ``ms`` for those named ``time...``
    (its times), else what the name states (:func:`metric_unit`: ``GFLOP/s``)."""
    return "ms" if name.startswith("time") else metric_unit(name)


@dataclass(frozen=True)
class _Description:
    """What the export says of one run's objective and quantities.

    Attributes:
        unit: the objective's unit (``""`` where unknown).
        direction: ``min`` or ``max``.
        timeunit: ``metadata.timeunit``, the unit of ``times.runtimes`` (None: unknown).
        kernel_tuner: the run replayed a Kernel Tuner file, whose fields have Kernel
            Tuner's units (:func:`kernel_tuner_unit`), for runs described by
            :func:`_inferred` only.
    """

    unit: str
    direction: str
    timeunit: str | None
    kernel_tuner: bool = False

    def of(self, name: str) -> str:
        """The unit of the metric ``name`` (``""`` where unknown)."""
        return kernel_tuner_unit(name) if self.kernel_tuner else metric_unit(name)

    @classmethod
    def stated(cls, objective: RunObjective) -> _Description:
        """As the run's problem stated it (stored with the run)."""
        timeunit = TIME_WORDS.get(objective.samples_unit, objective.samples_unit)
        return cls(objective.unit, objective.direction, timeunit or None)


def _inferred(problem: Mapping[str, Any], trials: Iterable[Trial], objective: str) -> _Description:
    """The fallback for a run stored before problems stated their objective's unit and
    direction (``RunRecord.objective`` None): guessed as exports did then, from the
    problem's stored settings and name, and from its trials. Never used for runs that
    store them.

    Units: a replayed Kernel Tuner cache or T4 file (its ``format`` and ``path``) holds
    Kernel Tuner's milliseconds; ``c-kernel`` and ``opencl-kernel`` time in seconds,
    ``laplacian`` in seconds per pixel; others by the objective's name. Direction: the
    stored one (``kt-cache``), else ``max`` where the value is the reciprocal of the
    objective's metric (a kernel's ``GB/s``), else ``min``.
    """
    if problem.get("format") in ("cache", "t4") and "path" in problem:  # kt-cache
        units = _Description(kernel_tuner_unit(objective), "min", "milliseconds", True)
    elif problem.get("name") in ("c-kernel", "opencl-kernel"):  # time, or one of the metrics
        units = _Description(
            "s" if objective == "time" else metric_unit(objective), "min", "seconds"
        )
    elif problem.get("name") == "laplacian":  # the value: the mean time per pixel
        units = _Description("s/pixel" if objective == "value" else "", "min", "seconds per pixel")
    else:
        units = _Description(metric_unit(objective), "min", None)
    if problem.get("direction") in ("min", "max"):
        return replace(units, direction=str(problem["direction"]))
    for t in trials:
        metric = t.measurement.metrics.get(objective)
        if not t.ok or t.value is None or not _numeric(metric) or isinstance(metric, list):
            continue
        same, reciprocal = math.isclose(t.value, metric), math.isclose(t.value * metric, 1.0)
        if same != reciprocal:
            return replace(units, direction="max" if reciprocal else "min")
    return units


def _numeric(value: Any) -> bool:
    """A finite number (not a boolean), or a non-empty list of such (nested or not)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_numeric(v) for v in value)
    return False


def _entry(
    trial: Trial,
    objective: str,
    units: _Description,
    order: list[str],
    names: dict[str, str],
    constants: dict,
) -> dict:
    m = trial.measurement
    status = m.status.value
    if m.ok:
        value: Any = m.metrics.get(objective, m.value)
    elif m.error in MARKERS:
        value = m.error
    else:
        value = _MARKER_OF.get(status, "RuntimeFailedConfig")
    when = datetime.datetime.fromtimestamp(trial.started_at, tz=datetime.UTC)
    config = {k: trial.config[k] for k in order if k in trial.config}
    config.update(trial.config)  # keys the space does not list, after its own
    measurements = [{"name": objective, "value": value, "unit": units.unit}]
    measurements += [
        {"name": str(k), "value": v, "unit": units.of(str(k))}
        for k, v in m.metrics.items()
        if k != objective and _numeric(v)
    ]
    return {
        "timestamp": str(when),
        "configuration": {**{names.get(k, k): v for k, v in config.items()}, **constants},
        "times": {"runtimes": list(m.samples)},
        "invalidity": STATUS_INVALIDITY[status],
        "correctness": 1 if m.ok else 0,
        "measurements": measurements,
        "objectives": [objective],
    }


def _levels(parameter: Mapping[str, Any]) -> list[Any] | None:
    """A stored parameter's levels in the space's order (None: a real interval, or an
    integer range too long to list)."""
    kind = parameter.get("kind")
    if kind == "ordinal":
        return list(parameter.get("levels") or [])
    if kind == "categorical":
        return list(parameter.get("choices") or [])
    if kind == "bool":
        return [False, True]
    if kind == "int":
        levels = range(parameter["low"], parameter["high"] + 1, parameter.get("step") or 1)
        return list(levels) if len(levels) <= 10_000 else None
    return None


def _tune_params(
    space: Mapping[str, Any], names: dict[str, str], constants: dict[str, Any]
) -> tuple[list[str], dict[str, list[Any]] | None]:
    """The keys of each configuration (the space's order, constants last, under the
    file's names) and each key's levels in the space's order (None when a parameter
    has no finite list of levels)."""
    parameters = [p for p in space.get("parameters") or [] if isinstance(p, dict)]
    keys = [names.get(p["name"], p["name"]) for p in parameters] + list(constants)
    levels = [_levels(p) for p in parameters] + [[v] for v in constants.values()]
    if any(level is None for level in levels):
        return keys, None
    return keys, dict(zip(keys, levels, strict=True))


def t4_document(journal: Journal, run_id: int | None = None) -> dict[str, Any]:
    """The T4 results document of one run (the journal's only run when ``run_id`` is None).

    Only the run's own evaluations are written (warm-start trials are data it was given).
    """
    run = _choose_run(journal, run_id)
    problem = run.settings.get("problem", {})
    objective = str(problem.get("objective") or "value")
    names = dict(problem.get("renamed") or {})
    constants = dict(problem.get("constants") or {})
    space = run.settings.get("space") or {}
    order = [p["name"] for p in space.get("parameters") or [] if isinstance(p, dict)]
    trials = [t for t in journal.trials(run.id) if t.counts_in_budget]
    if run.objective is not None:
        units = _Description.stated(run.objective)
    else:
        units = _inferred(problem, trials, objective)
    results = [_entry(t, objective, units, order, names, constants) for t in trials]
    keys, levels = _tune_params(space, names, constants)
    metadata: dict[str, Any] = {}
    if units.timeunit is not None:
        metadata["timeunit"] = units.timeunit
    metadata["objective"] = objective
    metadata["direction"] = units.direction
    if keys:
        metadata["tune_params_keys"] = keys
    if levels is not None and keys:
        metadata["tune_params"] = levels
    metadata["gpautotune"] = {
        "run": run.id,
        "problem": run.problem,
        "strategy": run.strategy,
        "seed": run.seed,
        "budget": run.budget,
    }
    return {"schema_version": T4_VERSION, "results": results, "metadata": metadata}


def export_t4(
    journal: Journal,
    path: str | os.PathLike[str],
    run_id: int | None = None,
    *,
    validate: bool = False,
) -> Path:
    """Write one run as a T4 results file (``.json``; gzip-compressed when it ends in ``.gz``).

    Args:
        journal: the trial journal.
        path: the file to write.
        run_id: the run (default: the journal's only run).
        validate: check the document against the vendored schema first (needs jsonschema).

    Raises:
        ConfigError: ``path`` is the journal read (or its ``-wal``, ``-shm`` or
            ``-journal`` file), or cannot be written.
    """
    check_not_journal(journal.path, path, "export")
    document = t4_document(journal, run_id)
    if validate:
        validate_t4(document)
    path = Path(path)
    text = json.dumps(document, default=str)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".gz":
            import gzip

            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the T4 file {str(path)!r}: {exc.strerror or exc}; give another path"
        ) from None
    return path
