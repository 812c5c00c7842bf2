"""What a run's problem states about its objective, stored beside the run.

A run stores its problem's :attr:`~gpautotune.problems.Problem.objective_unit`,
``direction`` and ``samples_unit`` in the ``run_objective`` table, outside its key: the
keys of runs stored before these were kept do not change, and such runs still resume
(opening one records them). Exports (T4) read them instead of guessing from the problem.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from gpautotune.exceptions import ConfigError

__all__ = ["RunObjective", "record_objective", "stored_objective"]


@dataclass(frozen=True)
class RunObjective:
    """A run's objective as its problem states it.

    Attributes:
        unit: the objective's unit (``""`` where unknown).
        direction: ``"min"``, or ``"max"`` where a higher objective is better (the
            tuner minimises the value; a maximised objective is a metric whose
            reciprocal is the value).
        samples_unit: the unit of the measurements' ``samples`` (``""`` where unknown).

    Raises:
        ConfigError: a direction other than ``min`` or ``max``, or a unit that is not text.
    """

    unit: str = ""
    direction: str = "min"
    samples_unit: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("min", "max"):
            raise ConfigError(f"a problem's direction is 'min' or 'max', not {self.direction!r}")
        for name in ("unit", "samples_unit"):
            if not isinstance(getattr(self, name), str):
                raise ConfigError(
                    f"a problem's {'objective_unit' if name == 'unit' else name} is text "
                    f'("" where unknown), not {getattr(self, name)!r}'
                )


def record_objective(conn: sqlite3.Connection, run_id: int, objective: RunObjective) -> None:
    """Store ``objective`` for the run, unless it has one already (the first one stays)."""
    conn.execute(
        "INSERT OR IGNORE INTO run_objective (run_id, unit, direction, samples_unit)"
        " VALUES (?,?,?,?)",
        (run_id, objective.unit, objective.direction, objective.samples_unit),
    )


def stored_objective(conn: sqlite3.Connection, run_id: int) -> RunObjective | None:
    """The run's stored objective; None for a run stored before they were kept (or a
    journal of that time, opened read-only, without the table)."""
    try:
        row = conn.execute(
            "SELECT unit, direction, samples_unit FROM run_objective WHERE run_id=?", (run_id,)
        ).fetchone()
    except sqlite3.OperationalError:  # no such table: a journal written before it
        return None
    return None if row is None else RunObjective(*row)
