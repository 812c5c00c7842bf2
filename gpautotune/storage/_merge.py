"""Joining journals (``Journal.copy_runs``, ``gpautotune merge``): a run copied whole, or
one held already and extended elsewhere given its further trials, and the report
settings the target lacks. All write inside the caller's transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpautotune.storage._objective import record_objective, stored_objective
from gpautotune.storage._records import dumps

if TYPE_CHECKING:
    from gpautotune.storage._journal import Journal

__all__ = ["copy_report_settings", "copy_run", "extend_run"]


def copy_report_settings(target: Journal, source: Journal) -> None:
    """Give ``target`` the report settings of ``source`` (a comparison's checkpoints,
    reference, label order, output folder) that it lacks: a key it does not hold, or
    holds as None. The ones it holds stay, even where ``source`` has others."""
    held = target.report_settings()
    missing = [
        (key, dumps(value))
        for key, value in source.report_settings().items()
        if value is not None and held.get(key) is None
    ]
    target._conn.executemany(
        "INSERT INTO report_settings (key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        missing,
    )


def _shared(target: Journal, source: Journal, table: str, *skip: str) -> list[str]:
    """The columns of ``table`` both journals have (less ``skip``): one may have a column
    the other lacks (nullable, or it was refused at open; see ``_opening._check_schema``)."""
    theirs = set(source._columns(table))
    return [c for c in target._columns(table) if c in theirs and c not in skip]


def extend_run(target: Journal, run_id: int, source: Journal, source_id: int) -> bool:
    """Copy the trials of ``source``'s run beyond those of ``target``'s run ``run_id`` (the
    same run, extended elsewhere), with its budget and status; False where it has no more,
    or where the held trials are not the first of the source's (then nothing is copied)."""
    trials = _shared(target, source, "trials", "id", "run_id")
    ours = target._conn.execute(
        "SELECT number, config FROM trials WHERE run_id=? ORDER BY number", (run_id,)
    ).fetchall()
    theirs = source._conn.execute(
        f"SELECT number, config, {', '.join(trials)} FROM trials WHERE run_id=? ORDER BY number",
        (source_id,),
    ).fetchall()
    if len(theirs) <= len(ours) or [tuple(t[:2]) for t in theirs[: len(ours)]] != ours:
        return False
    target._conn.executemany(
        f"INSERT INTO trials (run_id, {', '.join(trials)})"
        f" VALUES (?, {', '.join('?' * len(trials))})",
        [(run_id, *row[2:]) for row in theirs[len(ours) :]],
    )
    budget, status, finished_at = source._conn.execute(
        "SELECT budget, status, finished_at FROM runs WHERE id=?", (source_id,)
    ).fetchone()
    target._conn.execute(
        "UPDATE runs SET budget=?, status=?, finished_at=? WHERE id=?",
        (budget, status, finished_at, run_id),
    )
    _copy_objective(target, run_id, source, source_id)
    return True


def copy_run(target: Journal, source: Journal, source_id: int) -> int:
    """Insert ``source``'s run ``source_id``, its trials, data digest and stated objective,
    into ``target``, column by column (the columns both have); returns the new run's id."""
    runs = _shared(target, source, "runs", "id")
    trials = _shared(target, source, "trials", "id", "run_id")
    row = source._conn.execute(
        f"SELECT {', '.join(runs)} FROM runs WHERE id=?", (source_id,)
    ).fetchone()
    run_id = target._conn.execute(
        f"INSERT INTO runs ({', '.join(runs)}) VALUES ({', '.join('?' * len(runs))})", row
    ).lastrowid
    rows = source._conn.execute(
        f"SELECT {', '.join(trials)} FROM trials WHERE run_id=? ORDER BY number", (source_id,)
    ).fetchall()
    target._conn.executemany(
        f"INSERT INTO trials (run_id, {', '.join(trials)})"
        f" VALUES (?, {', '.join('?' * len(trials))})",
        [(run_id, *values) for values in rows],
    )
    digest = source.data_digest(source_id)
    if digest is not None:
        target._conn.execute("INSERT INTO run_data (run_id, digest) VALUES (?,?)", (run_id, digest))
    _copy_objective(target, run_id, source, source_id)
    return run_id


def _copy_objective(target: Journal, run_id: int, source: Journal, source_id: int) -> None:
    """Give ``target``'s run the objective ``source`` stored for its run, if it has none."""
    objective = stored_objective(source._conn, source_id)
    if objective is not None:
        record_objective(target._conn, run_id, objective)
