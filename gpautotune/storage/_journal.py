"""The trial journal: SQLite in WAL mode, append-only, one commit per trial.

A trial is committed before the strategy hears of it, so a process killed at any point
(``kill -9`` included) loses at most the evaluation in flight, never a stored trial.
Several processes may write to one journal (comparisons on Dask): SQLite serialises the
writes and ``busy_timeout`` makes writers wait instead of failing.
"""

from __future__ import annotations

import json
import math
import os
import platform
import socket
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from gpautotune.exceptions import StorageError
from gpautotune.measurement import Measurement, Status
from gpautotune.trial import Origin, Trial

__all__ = ["Journal", "RunRecord", "RunSpec", "package_versions"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    problem TEXT NOT NULL,
    problem_settings TEXT NOT NULL,
    strategy TEXT NOT NULL,
    strategy_settings TEXT NOT NULL,
    seed INTEGER,
    budget INTEGER,
    space TEXT NOT NULL,
    versions TEXT NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL DEFAULT 'running',
    label TEXT
);
CREATE TABLE IF NOT EXISTS trials (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    number INTEGER NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    value REAL,
    samples TEXT NOT NULL,
    metrics TEXT NOT NULL,
    error TEXT,
    info TEXT NOT NULL,
    origin TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_s REAL NOT NULL,
    UNIQUE (run_id, number)
);
CREATE INDEX IF NOT EXISTS trials_run ON trials(run_id);
"""

_PACKAGES = ("gpautotune", "numpy", "scipy", "torch", "gpytorch", "botorch", "pandas", "pyopencl")


def package_versions() -> dict[str, str]:
    """Versions of Python and the packages that shape results."""
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return str(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_json_default, sort_keys=True)


@dataclass(frozen=True)
class RunSpec:
    """What identifies a run: same key, same run (re-running resumes it)."""

    problem: str
    problem_settings: Mapping[str, Any]
    strategy: str
    strategy_settings: Mapping[str, Any]
    seed: int | None
    space: Mapping[str, Any]
    label: str | None = None

    @property
    def key(self) -> str:
        return _dumps(
            {
                "problem": self.problem,
                "problem_settings": self.problem_settings,
                "strategy": self.strategy,
                "strategy_settings": self.strategy_settings,
                "seed": self.seed,
                "label": self.label,
            }
        )


@dataclass(frozen=True)
class RunRecord:
    """A stored run."""

    id: int
    key: str
    problem: str
    strategy: str
    seed: int | None
    budget: int | None
    status: str
    started_at: float
    finished_at: float | None
    label: str | None
    settings: Mapping[str, Any] = field(default_factory=dict)


class Journal:
    """An SQLite trial journal (``path`` may be ``":memory:"``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=60000")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot open trial journal {self.path!r}: {exc}") from None

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs
    def open_run(self, spec: RunSpec, budget: int | None) -> RunRecord:
        """The run with ``spec``'s key (resumed, budget updated), or a new one."""
        existing = self.find_run(spec.key)
        if existing is not None:
            if budget is not None and budget != existing.budget:
                self._conn.execute(
                    "UPDATE runs SET budget=?, status='running' WHERE id=?", (budget, existing.id)
                )
            return self.get_run(existing.id)
        try:
            self._conn.execute(
                "INSERT INTO runs (key, problem, problem_settings, strategy, strategy_settings, seed, budget,"
                " space, versions, host, started_at, label) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    spec.key,
                    spec.problem,
                    _dumps(spec.problem_settings),
                    spec.strategy,
                    _dumps(spec.strategy_settings),
                    spec.seed,
                    budget,
                    _dumps(spec.space),
                    _dumps(package_versions()),
                    socket.gethostname(),
                    time.time(),
                    spec.label,
                ),
            )
        except sqlite3.IntegrityError:  # another process created it meanwhile
            pass
        return self.get_run(self.find_run(spec.key).id)

    def find_run(self, key: str) -> RunRecord | None:
        row = self._conn.execute("SELECT id FROM runs WHERE key=?", (key,)).fetchone()
        return None if row is None else self.get_run(row[0])

    def get_run(self, run_id: int) -> RunRecord:
        row = self._conn.execute(
            "SELECT id, key, problem, strategy, seed, budget, status, started_at, finished_at, label,"
            " problem_settings, strategy_settings, space, versions, host FROM runs WHERE id=?",
            (run_id,),
        ).fetchone()
        if row is None:
            raise StorageError(f"no run {run_id} in {self.path!r}")
        settings = {
            "problem": json.loads(row[10]),
            "strategy": json.loads(row[11]),
            "space": json.loads(row[12]),
            "versions": json.loads(row[13]),
            "host": row[14],
        }
        return RunRecord(*row[:10], settings=settings)

    def runs(self) -> list[RunRecord]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM runs ORDER BY id")]
        return [self.get_run(i) for i in ids]

    def finish_run(self, run_id: int) -> None:
        self._conn.execute(
            "UPDATE runs SET status='finished', finished_at=? WHERE id=?", (time.time(), run_id)
        )

    # ---------------------------------------------------------------- trials
    def add_trial(self, run_id: int, trial: Trial) -> None:
        """Append one trial and commit it (durable once this returns)."""
        self.add_trials(run_id, [trial])

    def add_trials(self, run_id: int, trials: Iterable[Trial]) -> None:
        """Append trials in one transaction."""
        rows = [self._row(run_id, t) for t in trials]
        try:
            with self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT INTO trials (run_id, number, config, status, value, samples, metrics, error, info,"
                    " origin, started_at, duration_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"trial numbers already stored for run {run_id}: {exc}") from None

    @staticmethod
    def _row(run_id: int, t: Trial) -> tuple[Any, ...]:
        m = t.measurement
        return (
            run_id,
            t.number,
            _dumps(t.config),
            m.status.value,
            m.value,
            _dumps(list(m.samples)),
            _dumps(dict(m.metrics)),
            m.error,
            _dumps(dict(t.info)),
            t.origin.value,
            t.started_at,
            t.duration_s,
        )

    def trials(self, run_id: int) -> list[Trial]:
        """Every trial of a run, in number order."""
        rows = self._conn.execute(
            "SELECT number, config, status, value, samples, metrics, error, info, origin, started_at, duration_s"
            " FROM trials WHERE run_id=? ORDER BY number",
            (run_id,),
        ).fetchall()
        return [
            Trial(
                number=r[0],
                config=json.loads(r[1]),
                measurement=Measurement(
                    Status(r[2]), r[3], tuple(json.loads(r[4])), json.loads(r[5]), r[6]
                ),
                info=json.loads(r[7]),
                origin=Origin(r[8]),
                started_at=r[9],
                duration_s=r[10],
            )
            for r in rows
        ]

    def count_trials(self, run_id: int, origin: Origin | None = Origin.TUNER) -> int:
        if origin is None:
            return self._conn.execute(
                "SELECT COUNT(*) FROM trials WHERE run_id=?", (run_id,)
            ).fetchone()[0]
        return self._conn.execute(
            "SELECT COUNT(*) FROM trials WHERE run_id=? AND origin=?", (run_id, origin.value)
        ).fetchone()[0]
