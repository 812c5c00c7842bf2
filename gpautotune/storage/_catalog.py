"""The problem catalog of a journal: how to rebuild each compared problem, its optimum.

A comparison records, next to its runs, the section (registry name and options) of each
problem it ran and the problem's known optimum, so that a report made later from the
journal alone can give slowdowns and rebuild replay tables (the exact random baseline).
Rows are keyed like runs: the problem's name and its ``describe()`` settings.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpautotune.exceptions import StorageError
from gpautotune.storage._journal import _dumps

__all__ = ["CatalogEntry", "record_problem", "problem_catalog"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS problem_catalog (
    problem TEXT NOT NULL,
    problem_settings TEXT NOT NULL,
    section TEXT NOT NULL,
    optimum REAL,
    PRIMARY KEY (problem, problem_settings)
);
"""


@dataclass(frozen=True)
class CatalogEntry:
    """A compared problem: its identity, how to build it, its optimum (None if unknown)."""

    problem: str
    settings: str
    section: Mapping[str, Any]
    optimum: float | None


def _connect(path: str | os.PathLike[str]) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(str(path), timeout=60.0, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=60000")
        conn.executescript(_SCHEMA)
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot open the problem catalog of {str(path)!r}: {exc}") from None
    return conn


def record_problem(
    path: str | os.PathLike[str],
    name: str,
    settings: Mapping[str, Any],
    section: Mapping[str, Any],
    optimum: float | None,
) -> None:
    """Insert or update the catalog row of a problem."""
    conn = _connect(path)
    try:
        conn.execute(
            "INSERT INTO problem_catalog (problem, problem_settings, section, optimum) VALUES (?,?,?,?)"
            " ON CONFLICT(problem, problem_settings) DO UPDATE SET section=excluded.section, optimum=excluded.optimum",
            (name, _dumps(settings), _dumps(section), optimum),
        )
    finally:
        conn.close()


def problem_catalog(path: str | os.PathLike[str]) -> dict[tuple[str, str], CatalogEntry]:
    """Catalog rows by ``(problem, settings JSON as stored with runs)``; empty if none."""
    if not Path(path).is_file():
        raise StorageError(f"journal {str(path)!r} does not exist")
    conn = _connect(path)
    try:
        rows = conn.execute(
            "SELECT problem, problem_settings, section, optimum FROM problem_catalog"
        ).fetchall()
    finally:
        conn.close()
    return {(r[0], r[1]): CatalogEntry(r[0], r[1], json.loads(r[2]), r[3]) for r in rows}
