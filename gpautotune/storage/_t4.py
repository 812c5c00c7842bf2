"""The field's exchange format out: a run's trials as a T4 results file.

T4 ("Open Autotuning Results Schema", version 1.0.0, the format Kernel Tuner writes with
``store_output_file``) lists one entry per evaluated configuration: ``configuration``,
``invalidity``, ``correctness``, ``measurements`` and ``times.runtimes``. The schema is
vendored with its Apache-2.0 licence in ``gpautotune/storage/schemas/T4/``; validating
against it needs ``jsonschema`` (the ``dev`` extra), exporting does not.

Configurations are written under the names of the problem's source file, constants
included, when the run's problem recorded them (the ``kt-cache`` problem does), so that
an export of a replayed Kernel Tuner cache reads back as the same space.
"""

from __future__ import annotations

import datetime
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.storage._journal import Journal, RunRecord
from gpautotune.storage._kernel_tuner import MARKERS, STATUS_INVALIDITY
from gpautotune.trial import Trial

__all__ = ["t4_document", "export_t4", "validate_t4", "t4_schema", "T4_VERSION"]

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


def _entry(trial: Trial, objective: str, names: dict[str, str], constants: dict) -> dict:
    m = trial.measurement
    status = m.status.value
    if m.ok:
        value: Any = m.metrics.get(objective, m.value)
    elif m.error in MARKERS:
        value = m.error
    else:
        value = _MARKER_OF.get(status, "RuntimeFailedConfig")
    when = datetime.datetime.fromtimestamp(trial.started_at, tz=datetime.UTC)
    return {
        "timestamp": str(when),
        "configuration": {**{names.get(k, k): v for k, v in trial.config.items()}, **constants},
        "times": {"runtimes": list(m.samples)},
        "invalidity": STATUS_INVALIDITY[status],
        "correctness": 1 if m.ok else 0,
        "measurements": [
            {
                "name": objective,
                "value": value,
                "unit": "ms" if objective.startswith("time") else "",
            }
        ],
        "objectives": [objective],
    }


def t4_document(journal: Journal, run_id: int | None = None) -> dict[str, Any]:
    """The T4 results document of one run (the journal's only run when ``run_id`` is None).

    Only the run's own evaluations are written (warm-start trials are data it was given).
    """
    run = _choose_run(journal, run_id)
    problem = run.settings.get("problem", {})
    objective = str(problem.get("objective") or "value")
    names = dict(problem.get("renamed") or {})
    constants = dict(problem.get("constants") or {})
    results = [
        _entry(t, objective, names, constants) for t in journal.trials(run.id) if t.counts_in_budget
    ]
    metadata: dict[str, Any] = {
        "gpautotune": {
            "run": run.id,
            "problem": run.problem,
            "strategy": run.strategy,
            "seed": run.seed,
            "budget": run.budget,
        }
    }
    if problem.get("format") in ("cache", "t4") and objective.startswith("time"):
        metadata["timeunit"] = "milliseconds"
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
    """
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
