"""The trial journal: SQLite in WAL mode, append-only, one commit per trial.

A trial is committed before the strategy hears of it, so a process killed at any point
(``kill -9`` included) loses at most the evaluation in flight, never a stored trial.
Asynchronous runs also record each configuration as *running* when it is dispatched
(:class:`RunningTrial`); the record goes in the transaction that commits its trial, so a
resumed run knows exactly which evaluations were in flight.
Several processes may write to one journal (comparisons on Dask): SQLite serialises the
writes and ``busy_timeout`` makes writers wait instead of failing. The package's SQL is
in this module and its private neighbours in ``gpautotune.storage`` (``_schema``: the
tables; ``_opening``: opening and the schema checks; ``_owners``: run ownership;
``_identity``: finding a specification's run, refusing a taken name; ``_merge``:
joining journals; ``_objective``: the objective a run's problem states): readers
(reports, exports) use the journal's methods.

One process at a time tunes a run: :meth:`Journal.claim_run` records the owner and
refuses a run whose owner still runs, before anything is measured (``_owners``). A run
also keeps the digest of the data it was made from (a replayed table), beside its key:
resuming it on other data is refused (``_identity``). Failures of the database (a full
disk, a read-only file or folder, a path under a file) are storage errors naming the
journal and a fix (:class:`~gpautotune.exceptions.StorageError`).

Commits go to the ``-wal`` file first. A writer checkpoints them into the ``.db`` when a
run finishes or is left, when it closes the journal, and every ``CHECKPOINT_EVERY_S``,
so a ``.db`` copied alone is complete after a normal finish. Readers write nothing and
leave no file beside a clean journal, and journals of a newer ``SCHEMA_VERSION`` are
refused at open (``_opening``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from gpautotune.exceptions import StorageError
from gpautotune.storage import _identity, _owners
from gpautotune.storage._merge import copy_report_settings, copy_run, extend_run
from gpautotune.storage._objective import record_objective, stored_objective
from gpautotune.storage._opening import SCHEMA_VERSION, open_read_only, open_writer, sql_errors
from gpautotune.storage._owners import RunOwnedError
from gpautotune.storage._records import (
    CatalogEntry,
    RunningTrial,
    RunRecord,
    RunSpec,
    dumps,
    package_versions,
)
from gpautotune.storage._trial_rows import trial_from_row, trial_row
from gpautotune.storage._url import journal_path
from gpautotune.trial import Origin, Trial

if TYPE_CHECKING:
    import pandas as pd

# SCHEMA_VERSION and RunOwnedError are defined in _opening and _owners; named here too,
# where the package, its tests and earlier code import them.
__all__ = ["CHECKPOINT_EVERY_S", "SCHEMA_VERSION", "Journal", "RunOwnedError"]

_log = logging.getLogger(__name__)

#: A writer checkpoints at least this often while it stores trials (see
#: :meth:`Journal.checkpoint`): a ``.db`` copied without its ``-wal`` after a ``kill -9``
#: misses at most the last seconds of trials, and no trial pays for a checkpoint.
CHECKPOINT_EVERY_S = 30.0


class Journal:
    """An SQLite trial journal (``path`` may be ``":memory:"``).

    Args:
        path: the database file (created with its folder if missing), an
            ``sqlite:///PATH`` URL, or ``":memory:"`` (see
            :func:`~gpautotune.storage.journal_path`).
        read_only: open an existing journal without writing to it (reports, exports).

    Raises:
        StorageError: the file cannot be opened, or (read-only) does not exist or is not
            a journal, or ``path`` is a URL of another kind.
    """

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.path = journal_path(path)
        self.read_only = read_only
        self._checkpointed = time.monotonic()
        self._conn = open_read_only(self.path) if read_only else open_writer(self.path)

    def _sql(self, what: str) -> AbstractContextManager[None]:
        """Database failures as one :class:`StorageError` naming the journal and a fix."""
        return sql_errors(self.path, what)

    def checkpoint(self) -> None:
        """Copy the commits of the WAL into the journal file (``PASSIVE``: waits for no
        reader), so that the file alone, copied without its ``-wal``, holds them. Trials
        are durable without it: a failure here is only logged."""
        self._checkpointed = time.monotonic()
        if self.read_only:
            return
        try:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error as exc:
            _log.debug("checkpoint of %r failed: %s", self.path, exc)

    def close(self) -> None:
        """Close the journal; a writer checkpoints first (SQLite checkpoints on its own
        only when the last connection closes, not while other processes have it open)."""
        self.checkpoint()
        self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs
    def open_run(
        self, spec: RunSpec, budget: int | None, *, unique_name: bool = False
    ) -> RunRecord:
        """The run with ``spec``'s key (resumed, budget updated), or a new one; the
        specification's objective is recorded where the run has none. With
        ``unique_name``, a new run whose label a run of its problem has with another
        strategy is refused (:func:`~gpautotune.storage.check_run_name`), in one
        ``BEGIN IMMEDIATE`` transaction with the run's making: of two processes at
        once, the second sees the first's.

        Raises:
            RunNameError: the name is taken (``unique_name``); nothing is stored.
            StorageError: the run exists and was made from other data (another digest),
                or the journal cannot be written.
        """
        with self._sql("cannot open a run in"), self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            record = self._open_run(spec, budget, unique_name)
            _identity.check_data(self, record, spec.data_digest)
            if spec.objective is None or record.objective is not None:
                return record
            record_objective(self._conn, record.id, spec.objective)
            return self.get_run(record.id)

    def _open_run(self, spec: RunSpec, budget: int | None, unique_name: bool) -> RunRecord:
        existing = self.find(spec)
        if existing is None and unique_name:
            _identity.check_name(self, spec)
        if existing is not None:
            _identity.check_space(self, existing, spec)
            if budget is not None and budget != existing.budget:
                self._conn.execute(
                    "UPDATE runs SET budget=?, status='running' WHERE id=?", (budget, existing.id)
                )
            return self.get_run(existing.id)
        self._conn.execute(
            "INSERT INTO runs (key, problem, problem_settings, strategy, strategy_settings,"
            " seed, budget, space, versions, host, started_at, label)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                spec.key,
                spec.problem,
                dumps(spec.problem_settings),
                spec.strategy,
                dumps(spec.strategy_settings),
                spec.seed,
                budget,
                dumps(spec.space),
                dumps(package_versions()),
                socket.gethostname(),
                time.time(),
                spec.label,
            ),
        )
        return self.get_run(self.find_run(spec.key).id)  # under the lock: none made it since

    def find(self, spec: RunSpec) -> RunRecord | None:
        """The run of ``spec``: the one with its key, else one made from the same data
        (digest) read from another place (see ``RunSpec.placeless_key``); runs set
        aside (``set_aside_run``) are not found."""
        return _identity.find(self, spec)

    def finished(self) -> set[tuple[str, int | None]]:
        """``(key, budget)`` of the finished runs, and ``(placeless key, budget)`` of those
        made from replayed data (see ``RunSpec.placeless_key``)."""
        out: set[tuple[str, int | None]] = set()
        for _, key, budget, where in _identity.identities(self._conn, "r.status = 'finished'"):
            out |= {(key, budget)} | ({(where, budget)} if where else set())
        return out

    def copy_runs(
        self, source: Journal, keep: Callable[[RunRecord], bool] | None = None
    ) -> tuple[int, int]:
        """Copy the finished runs of ``source``, with their trials, data digests and stated
        objectives, into this journal: runs made on several machines joined into one
        comparison's journal.
        The report settings this journal lacks (a comparison's checkpoints, reference,
        label order and output folder) are copied too, so that its report is the one
        a single command would have made; those it holds stay.

        Args:
            source: the journal to copy from (it is only read).
            keep: copy only the runs it accepts (all when None).

        Returns:
            ``(copied, skipped)``: a run this journal holds already (its key, or its
            placeless key: the same replayed data read from another place) is skipped,
            unless the source extended it (the held trials are the first of the source's,
            which has more): then the rest of its trials are copied, with its budget and
            status, and it counts as copied.
        """
        if self.read_only:
            raise StorageError(f"journal {self.path!r} is open read-only")
        copied = skipped = 0
        with self._sql("cannot copy runs into"):
            held = {
                k: run_id
                for run_id, key, _, where in _identity.identities(self._conn, "1")
                for k in (key, where)
                if k
            }
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for source_id, key, _, where in _identity.identities(
                    source._conn, "r.status = 'finished'"
                ):
                    if keep is not None and not keep(source.get_run(source_id)):
                        continue
                    held_id = held.get(key, held.get(where) if where is not None else None)
                    if held_id is not None:
                        extended = extend_run(self, held_id, source, source_id)
                        copied, skipped = copied + extended, skipped + (not extended)
                        continue
                    run_id = copy_run(self, source, source_id)
                    held |= {key: run_id} | ({where: run_id} if where else {})
                    copied += 1
                self._conn.executemany(
                    "INSERT OR IGNORE INTO problem_catalog VALUES (?,?,?,?)",
                    source._conn.execute(
                        "SELECT problem, problem_settings, section, optimum FROM problem_catalog"
                    ).fetchall(),
                )
                copy_report_settings(self, source)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return copied, skipped

    def _columns(self, table: str) -> list[str]:
        return [row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")]

    def data_digest(self, run_id: int) -> str | None:
        """The digest of the data the run was made from (None: not a replay, or a run
        stored before digests were kept)."""
        try:
            row = self._conn.execute(
                "SELECT digest FROM run_data WHERE run_id=?", (run_id,)
            ).fetchone()
        except sqlite3.OperationalError:  # a journal written before digests (read-only)
            return None
        return None if row is None else row[0]

    def claim_run(self, run_id: int) -> None:
        """Make this process the run's owner (before measuring anything for it).

        Raises:
            RunOwnedError: another process that still runs owns it.
        """
        with self._sql("cannot claim a run in"):
            _owners.claim_run(self._conn, self.path, run_id)

    def release_run(self, run_id: int) -> None:
        """Give up ownership of a run (this process's claim only)."""
        with self._sql("cannot release a run in"):
            _owners.release_run(self._conn, run_id)
        self.checkpoint()  # the run is left (finished or interrupted): the file holds it

    def owned(self, run_id: int) -> bool:
        """Whether a process that still runs owns the run (a ``running`` run without one
        was interrupted: killed, or its machine stopped)."""
        return _owners.owned(self._conn, run_id)

    def find_run(self, key: str) -> RunRecord | None:
        row = self._conn.execute("SELECT id FROM runs WHERE key=?", (key,)).fetchone()
        return None if row is None else self.get_run(row[0])

    def get_run(self, run_id: int) -> RunRecord:
        row = self._conn.execute(
            "SELECT id, key, problem, strategy, seed, budget, status, started_at, finished_at,"
            " label, problem_settings, strategy_settings, space, versions, host"
            " FROM runs WHERE id=?",
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
        return RunRecord(
            *row[:10], settings=settings, objective=stored_objective(self._conn, run_id)
        )

    def runs(self) -> list[RunRecord]:
        ids = [r[0] for r in self._conn.execute("SELECT id FROM runs ORDER BY id")]
        return [self.get_run(i) for i in ids]

    def finish_run(self, run_id: int) -> None:
        with self._sql("cannot finish a run in"):
            self._conn.execute(
                "UPDATE runs SET status='finished', finished_at=? WHERE id=?",
                (time.time(), run_id),
            )
        self.checkpoint()

    def set_aside_run(self, run_id: int) -> None:
        """Mark a run ``stopped`` and free its key and name: the run and its trials stay
        (for the record), and opening a run with the same settings (or the same name,
        with other settings) starts a new one."""
        with self._sql("cannot set a run aside in"):
            self._conn.execute(
                "UPDATE runs SET status='stopped', key=key || ? WHERE id=?",
                (f"#stopped-{run_id}", run_id),
            )

    # ---------------------------------------------------------------- trials
    def add_trial(self, run_id: int, trial: Trial) -> None:
        """Append one trial and commit it (durable once this returns)."""
        self.add_trials(run_id, [trial])

    def add_trials(
        self, run_id: int, trials: Iterable[Trial], *, completes: Iterable[int] = ()
    ) -> None:
        """Append trials in one transaction, which also removes the running records
        ``completes`` (ids of :class:`RunningTrial`) whose trials these are."""
        rows = [trial_row(run_id, t) for t in trials]
        try:
            with self._sql("cannot store a trial in"), self._conn:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "INSERT INTO trials (run_id, number, config, status, value, samples, metrics,"
                    " error, info, origin, started_at, duration_s)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
                self._conn.executemany(
                    "DELETE FROM running_trials WHERE id=? AND run_id=?",
                    [(i, run_id) for i in completes],
                )
        except StorageError as exc:
            if "UNIQUE" not in str(exc):
                raise
            numbers = [r[1] for r in rows]
            raise RunOwnedError(
                f"run {run_id} of {self.path!r} already has trial(s) {numbers}: something else "
                "writes the same run (another TuningRun on it in this process?)"
            ) from None
        if time.monotonic() - self._checkpointed >= CHECKPOINT_EVERY_S:
            self.checkpoint()

    def trials(self, run_id: int) -> list[Trial]:
        """Every trial of a run, in number order."""
        rows = self._conn.execute(
            "SELECT number, config, status, value, samples, metrics, error, info, origin,"
            " started_at, duration_s FROM trials WHERE run_id=? ORDER BY number",
            (run_id,),
        ).fetchall()
        return [trial_from_row(r) for r in rows]

    def count_trials(self, run_id: int, origin: Origin | None = Origin.TUNER) -> int:
        if origin is None:
            return self._conn.execute(
                "SELECT COUNT(*) FROM trials WHERE run_id=?", (run_id,)
            ).fetchone()[0]
        return self._conn.execute(
            "SELECT COUNT(*) FROM trials WHERE run_id=? AND origin=?", (run_id, origin.value)
        ).fetchone()[0]

    # ------------------------------------------------------- running trials
    def add_running(
        self, run_id: int, entries: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> list[int]:
        """Record ``(config, info)`` pairs as running (dispatched) in one transaction;
        returns their ids, in order."""
        now, ids = time.time(), []
        with self._sql("cannot record a dispatched configuration in"), self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            for config, info in entries:
                cursor = self._conn.execute(
                    "INSERT INTO running_trials (run_id, config, info, dispatched_at)"
                    " VALUES (?,?,?,?)",
                    (run_id, dumps(dict(config)), dumps(dict(info)), now),
                )
                ids.append(int(cursor.lastrowid))
        return ids

    def running(self, run_id: int) -> list[RunningTrial]:
        """The running records of a run, in dispatch order (none in journals written
        before asynchronous runs existed)."""
        try:
            rows = self._conn.execute(
                "SELECT id, config, info, dispatched_at FROM running_trials WHERE run_id=?"
                " ORDER BY id",
                (run_id,),
            ).fetchall()
        except sqlite3.OperationalError:  # no such table (an older journal, read-only)
            return []
        return [RunningTrial(r[0], json.loads(r[1]), json.loads(r[2]), r[3]) for r in rows]

    def clear_running(self, run_id: int) -> None:
        """Forget the running records of a run (it finished without them)."""
        with self._sql("cannot clear the running records in"):
            self._conn.execute("DELETE FROM running_trials WHERE run_id=?", (run_id,))

    # ----------------------------------------------------------- run tables
    def run_table(self) -> pd.DataFrame:
        """One row per run: ``id, problem, problem_settings`` (stored JSON), ``strategy,
        strategy_settings`` (stored JSON), ``seed, budget, status, label, wall_s``
        (finished minus started, NaN while unfinished), in id order."""
        import pandas as pd

        return pd.read_sql_query(
            "SELECT id, problem, problem_settings, strategy, strategy_settings, seed, budget,"
            " status, label, finished_at - started_at AS wall_s FROM runs ORDER BY id",
            self._conn,
        )

    def trial_values(self, origin: Origin | None = Origin.TUNER) -> pd.DataFrame:
        """One row per trial of every run (of ``origin``; every trial when None):
        ``run_id, number, status, value`` and a peer's running totals ``refused,
        duplicates`` (its trials' ``info``; NaN for other strategies), in run and number
        order."""
        import pandas as pd

        where, args = ("WHERE origin=?", (origin.value,)) if origin else ("", ())
        return pd.read_sql_query(
            "SELECT run_id, number, status, value,"
            " json_extract(info, '$.invalid_refused') AS refused,"
            " json_extract(info, '$.duplicates') AS duplicates"
            f" FROM trials {where} ORDER BY run_id, number",
            self._conn,
            params=args,
        )

    # -------------------------------------------------------- problem catalog
    def record_problem(
        self,
        name: str,
        settings: Mapping[str, Any],
        section: Mapping[str, Any],
        optimum: float | None,
    ) -> None:
        """Insert or update the catalog entry of a problem (see :class:`CatalogEntry`)."""
        with self._sql("cannot record a problem in"):
            self._conn.execute(
                "INSERT INTO problem_catalog (problem, problem_settings, section, optimum)"
                " VALUES (?,?,?,?) ON CONFLICT(problem, problem_settings)"
                " DO UPDATE SET section=excluded.section, optimum=excluded.optimum",
                (name, dumps(settings), dumps(section), optimum),
            )

    def problem_catalog(self) -> dict[tuple[str, str], CatalogEntry]:
        """Catalog entries by ``(problem, settings JSON as stored with runs)``; empty when
        the journal has none (journals written before the catalog, read-only)."""
        try:
            rows = self._conn.execute(
                "SELECT problem, problem_settings, section, optimum FROM problem_catalog"
            ).fetchall()
        except sqlite3.OperationalError:  # no such table
            return {}
        return {(r[0], r[1]): CatalogEntry(r[0], r[1], json.loads(r[2]), r[3]) for r in rows}

    # -------------------------------------------------------- report settings
    def record_report_settings(self, settings: Mapping[str, Any]) -> None:
        """Store how the journal's report is made (a comparison's ``checkpoints``,
        ``reference`` and ``output`` folder), replacing earlier values of those keys."""
        with self._sql("cannot record report settings in"):
            self._conn.executemany(
                "INSERT INTO report_settings (key, value) VALUES (?, ?)"
                " ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                [(k, dumps(v)) for k, v in settings.items()],
            )

    def report_settings(self) -> dict[str, Any]:
        """The stored report settings; empty when none (or for journals written before
        they were stored, opened read-only)."""
        try:
            rows = self._conn.execute("SELECT key, value FROM report_settings").fetchall()
        except sqlite3.OperationalError:  # no such table
            return {}
        return {k: json.loads(v) for k, v in rows}
