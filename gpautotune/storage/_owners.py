"""Run ownership: one process at a time tunes a run.

:func:`claim_run` records the owner (host, pid, process start time) in ``run_owners`` and
refuses a run whose owner still runs, before anything is measured; the owner of a killed
process (or one on another host: the journal was copied here) is taken over.

Kept apart from :class:`~gpautotune.storage.Journal`: telling a live owner from a dead
one (a pid may be reused, so its start time is compared) is process bookkeeping, not
storage of runs and trials.
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import time

from gpautotune.exceptions import StorageError

__all__ = ["RunOwnedError", "claim_run", "release_run"]

#: The journal's logger (its name unchanged since ownership moved out of ``_journal``).
_log = logging.getLogger("gpautotune.storage._journal")


class RunOwnedError(StorageError):
    """Another live process is tuning the run (its trials would collide)."""


def _process_started(pid: int) -> float | None:
    """A process's start time (None when it does not exist): a pid alone may be reused."""
    import psutil

    try:
        process = psutil.Process(pid)
        return None if process.status() == psutil.STATUS_ZOMBIE else process.create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
        return None


def claim_run(conn: sqlite3.Connection, path: str, run_id: int) -> None:
    """Make this process the owner of run ``run_id`` of the journal ``conn`` (at
    ``path``, named in the error), in one transaction of its own.

    Raises:
        RunOwnedError: another process that still runs owns it.
        sqlite3.Error: the journal cannot be written (the caller names it).
    """
    me = (socket.gethostname(), os.getpid(), _process_started(os.getpid()) or 0.0)
    with conn:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute(
            "SELECT host, pid, process_started, since FROM run_owners WHERE run_id=?",
            (run_id,),
        ).fetchone()
        if row is not None and tuple(row[:2]) != me[:2] and _alive(*row[:3]):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row[3]))
            raise RunOwnedError(
                f"another process owns run {run_id} of {path!r} (pid {row[1]} on "
                f"{row[0]}, since {when}): let it finish or stop it, then run again; "
                "nothing was measured"
            )
        conn.execute(
            "INSERT OR REPLACE INTO run_owners (run_id, host, pid, process_started, since)"
            " VALUES (?,?,?,?,?)",
            (run_id, *me, time.time()),
        )


def release_run(conn: sqlite3.Connection, run_id: int) -> None:
    """Give up ownership of a run (this process's claim only)."""
    conn.execute(
        "DELETE FROM run_owners WHERE run_id=? AND host=? AND pid=?",
        (run_id, socket.gethostname(), os.getpid()),
    )


def owned(conn: sqlite3.Connection, run_id: int) -> bool:
    """Whether a process that still runs owns run ``run_id`` (a reader's question: no
    claim is taken over, and a journal without the owners' table has no owner)."""
    try:
        row = conn.execute(
            "SELECT host, pid, process_started FROM run_owners WHERE run_id=?", (run_id,)
        ).fetchone()
    except sqlite3.OperationalError:  # a journal of a version before owners were kept
        return False
    return row is not None and _alive(*row, taking_over=False)


def _alive(host: str, pid: int, started: float, *, taking_over: bool = True) -> bool:
    """Whether an owner still runs. An owner on another host is not: a journal in WAL
    mode is only ever shared by processes of one host, so it was copied here."""
    if host != socket.gethostname():
        if taking_over:
            _log.warning("run owned by pid %s on %s, another host: taken over", pid, host)
        return False
    now = _process_started(pid)
    return now is not None and abs(now - started) < 1.0
