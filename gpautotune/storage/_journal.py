"""The trial journal: SQLite in WAL mode, append-only, one commit per trial.

A trial is committed before the strategy hears of it, so a process killed at any point
(``kill -9`` included) loses at most the evaluation in flight, never a stored trial.
Asynchronous runs also record each configuration as *running* when it is dispatched
(:class:`RunningTrial`); the record goes in the transaction that commits its trial, so a
resumed run knows exactly which evaluations were in flight.
Several processes may write to one journal (comparisons on Dask): SQLite serialises the
writes and ``busy_timeout`` makes writers wait instead of failing. Every SQL statement of
the package is in this module and its tables' definition (``_schema.py``): readers
(reports, exports) use the journal's methods.

One process at a time tunes a run: :meth:`Journal.claim_run` records the owner (host,
pid, process start time) and refuses a run whose owner still runs, before anything is
measured; the owner of a killed process is taken over. A run also keeps the digest of
the data it was made from (a replayed table), beside its key: resuming it on other data
is refused. Failures of the database (a full disk, a read-only file or folder, a path
under a file) are storage errors naming the journal and a fix
(:class:`~gpautotune.exceptions.StorageError`).

Commits go to the ``-wal`` file first. A writer checkpoints them into the ``.db`` when a
run finishes or is left, when it closes the journal, and every ``CHECKPOINT_EVERY_S``,
so a ``.db`` copied alone is complete after a normal finish. Readers write nothing and
leave no file beside a clean journal; they refuse a ``-wal`` they cannot read (read-only
media) rather than show a stale journal. Journals are stamped with ``SCHEMA_VERSION``:
a newer one, or one whose tables this code cannot write, is refused at open.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpautotune.exceptions import StorageError
from gpautotune.measurement import Measurement, Status
from gpautotune.storage._merge import copy_report_settings, copy_run, extend_run
from gpautotune.storage._records import (
    CatalogEntry,
    RunningTrial,
    RunRecord,
    RunSpec,
    dumps,
    package_versions,
    placeless_key,
    space_changes,
)
from gpautotune.storage._schema import HINTS, SCHEMA
from gpautotune.storage._url import journal_path
from gpautotune.trial import Origin, Trial

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SCHEMA_VERSION", "Journal", "RunOwnedError"]

_log = logging.getLogger(__name__)

#: The journal schema version this code writes (``PRAGMA user_version``); version 0 is a
#: journal written before versions were stamped (the same tables, or fewer of them).
SCHEMA_VERSION = 1

#: A writer checkpoints at least this often while it stores trials (see
#: :meth:`Journal.checkpoint`): a ``.db`` copied without its ``-wal`` after a ``kill -9``
#: misses at most the last seconds of trials, and no trial pays for a checkpoint.
CHECKPOINT_EVERY_S = 30.0


@functools.cache
def _known_columns() -> dict[str, frozenset[str]]:
    """The columns of ``runs`` and ``trials`` this code writes and reads (``SCHEMA``'s)."""
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    out = {
        t: frozenset(r[1] for r in conn.execute(f"PRAGMA table_info({t})"))
        for t in ("runs", "trials")
    }
    conn.close()
    return out


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
        if read_only:
            self._conn = self._open_read_only()
            return
        if self.path != ":memory:":
            folder = Path(self.path).expanduser().parent
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"cannot make the folder of trial journal {self.path!r}: "
                    f"{exc.strerror or exc} ({exc.filename or folder})"
                ) from None
        with self._sql("cannot open trial journal"):
            self._conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            try:
                self._check_tables()
            except StorageError:
                self._conn.close()
                raise
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA busy_timeout=60000")
            self._conn.executescript(SCHEMA)
            if self._conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _check_tables(self) -> None:
        """Refuse, before anything is written or measured, a database of another
        application (tables but no ``runs``: every journal, of any version, has it) and a
        journal this code cannot write (see :meth:`_check_schema`)."""
        tables = {
            name
            for (name,) in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        if tables and "runs" not in tables:
            raise StorageError(
                f"{self.path!r} holds other tables: not a gpautotune journal "
                f"({', '.join(sorted(tables))}); give another place (--db)"
            )
        if tables:
            self._check_schema(self._conn, writing=True)

    def _check_schema(self, conn: sqlite3.Connection, *, writing: bool) -> None:
        """Refuse a journal of a newer gpautotune (a higher ``user_version``: its tables
        may mean something else), and one whose ``runs`` or ``trials`` lack a column this
        code uses or (to write) require one it does not write: found at open, not when
        the first measurement is stored and lost. Journals of earlier versions (version
        0, perhaps without the newer tables) pass: opening one to write adds the tables."""
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StorageError(
                f"{self.path!r} was written by a newer gpautotune (journal schema version "
                f"{version}; this one knows up to {SCHEMA_VERSION}): upgrade gpautotune to "
                "use it, or give another journal (--db)"
            )
        for table, known in _known_columns().items():
            info = conn.execute(f"PRAGMA table_info({table})").fetchall()
            missing = sorted(known - {row[1] for row in info}) if info else []
            # rows (cid, name, type, NOT NULL, default, ...): a column no INSERT here fills
            unfilled = [r[1] for r in info if r[1] not in known and r[3] and r[4] is None]
            if missing:
                problem = f"lacks column(s) {', '.join(missing)} that gpautotune uses"
            elif unfilled and writing:
                problem = f"requires column(s) {', '.join(unfilled)} that gpautotune does not write"
            else:
                continue
            raise StorageError(
                f"table {table} of {self.path!r} {problem}: the journal was made by another "
                "version or program; open it with the gpautotune that made it, or give "
                "another journal (--db)"
            )

    @contextlib.contextmanager
    def _sql(self, what: str) -> Iterator[None]:
        """Database failures as one :class:`StorageError` naming the journal and a fix."""
        try:
            yield
        except sqlite3.Error as exc:
            text = str(exc)
            hint = next((h for k, h in HINTS.items() if k in text), None)
            suffix = f": {hint}" if hint else ""
            raise StorageError(f"{what} {self.path!r}: {text}{suffix}") from None

    def _open_read_only(self) -> sqlite3.Connection:
        """Open without ever writing (nor leaving files beside the journal, see
        :meth:`_snapshot`); the file must hold a journal's tables, of a version this code
        reads (:meth:`_check_schema`)."""
        file = Path(self.path).expanduser()
        if not file.is_file():
            raise StorageError(f"journal {self.path!r} does not exist")
        try:
            conn = self._snapshot(file) or self._connect_read_only(file)
        except sqlite3.DatabaseError as exc:  # not a database at all
            raise StorageError(f"{self.path!r} is not a gpautotune journal: {exc}") from None
        try:
            conn.execute("SELECT id, key FROM runs LIMIT 1").fetchall()
            conn.execute("SELECT run_id, number FROM trials LIMIT 1").fetchall()
            self._check_schema(conn, writing=False)
        except sqlite3.DatabaseError as exc:  # no such table, or not a database at all
            conn.close()
            raise StorageError(f"{self.path!r} is not a gpautotune journal: {exc}") from None
        except StorageError:
            conn.close()
            raise
        return conn

    def _snapshot(self, file: Path) -> sqlite3.Connection | None:
        """The journal read whole into memory through ``immutable`` (no lock, no file
        made: ``mode=ro`` would leave ``-wal`` and ``-shm`` files beside it), where no
        ``-wal`` or ``-journal`` lies beside it (every commit is in the file, no writer is
        at work) and the file did not change while it was read; else None."""
        sides = (Path(f"{file}-wal"), Path(f"{file}-journal"))

        def state() -> tuple[Any, ...]:
            st = file.stat()
            return st.st_ino, st.st_size, st.st_mtime_ns, any(p.exists() for p in sides)

        before = state()
        if before[-1]:
            return None
        source = sqlite3.connect(f"{file.resolve().as_uri()}?immutable=1", uri=True)
        memory = sqlite3.connect(":memory:")
        try:
            source.backup(memory)
        except sqlite3.DatabaseError:
            memory.close()
            if state() == before:
                raise
            return None  # a checkpoint wrote the file meanwhile
        finally:
            source.close()
        if state() != before:  # a writer came: read its WAL too
            memory.close()
            return None
        memory.execute("PRAGMA query_only=ON")  # writes fail as on a read-only file
        return memory

    def _connect_read_only(self, file: Path) -> sqlite3.Connection:
        """``mode=ro``, which reads the ``-wal``; on read-only media, where SQLite cannot
        make the WAL index, ``immutable``, which ignores the ``-wal``: refused where the
        ``-wal`` holds anything, so a reader never shows a stale journal."""
        uri = file.resolve().as_uri()
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60.0)
        try:
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
            return conn
        except sqlite3.OperationalError:  # cannot read here (read-only media)
            conn.close()
        wal = Path(f"{file}-wal")
        if wal.is_file() and wal.stat().st_size > 0:
            raise StorageError(
                f"cannot read {self.path!r} here: the trials committed since its last "
                f"checkpoint are in {wal.name!r} beside it, which SQLite reads only where it "
                f"can write {file.name + '-shm'!r}; copy {file.name!r} and {wal.name!r} "
                "together to a writable folder and read the copy, or open it where it is "
                "writable"
            )
        return sqlite3.connect(f"{uri}?immutable=1", uri=True)

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
    def open_run(self, spec: RunSpec, budget: int | None) -> RunRecord:
        """The run with ``spec``'s key (resumed, budget updated), or a new one.

        Raises:
            StorageError: the run exists and was made from other data (another digest),
                or the journal cannot be written.
        """
        with self._sql("cannot open a run in"):
            record = self._open_run(spec, budget)
            self._check_data(record, spec.data_digest)
            return record

    def _open_run(self, spec: RunSpec, budget: int | None) -> RunRecord:
        existing = self.find(spec)
        if existing is not None:
            self._check_space(existing, spec)
            if budget is not None and budget != existing.budget:
                self._conn.execute(
                    "UPDATE runs SET budget=?, status='running' WHERE id=?", (budget, existing.id)
                )
            return self.get_run(existing.id)
        try:
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
        except sqlite3.IntegrityError:  # another process created it meanwhile
            pass
        return self.get_run(self.find_run(spec.key).id)

    def find(self, spec: RunSpec) -> RunRecord | None:
        """The run of ``spec``: the one with its key, else one made from the same data
        (digest) read from another place (see ``RunSpec.placeless_key``); runs set
        aside (``set_aside_run``) are not found."""
        existing = self.find_run(spec.key)
        if existing is not None or spec.placeless_key is None:
            return existing
        rows = self._conn.execute(
            "SELECT r.id, r.problem_settings, r.strategy_settings FROM runs r JOIN run_data d"
            " ON d.run_id = r.id WHERE r.problem=? AND r.strategy=? AND r.seed IS ?"
            " AND r.label IS ? AND d.digest=? AND r.status != 'stopped' ORDER BY r.id",
            (spec.problem, spec.strategy, spec.seed, spec.label, spec.data_digest),
        ).fetchall()
        for run_id, problem, strategy in rows:
            stored = placeless_key(
                spec.problem,
                json.loads(problem),
                spec.strategy,
                json.loads(strategy),
                spec.seed,
                spec.label,
                spec.data_digest,
            )
            if stored == spec.placeless_key:
                return self.get_run(run_id)
        return None

    def finished(self) -> set[tuple[str, int | None]]:
        """``(key, budget)`` of the finished runs, and ``(placeless key, budget)`` of those
        made from replayed data (see ``RunSpec.placeless_key``)."""
        out: set[tuple[str, int | None]] = set()
        for _, key, budget, where in self._identities("r.status = 'finished'"):
            out |= {(key, budget)} | ({(where, budget)} if where else set())
        return out

    def _identities(self, condition: str) -> list[tuple[int, str, int | None, str | None]]:
        """``(id, key, budget, placeless key)`` of the runs that meet the SQL ``condition``."""
        rows = self._conn.execute(
            "SELECT r.id, r.key, r.budget, r.problem, r.problem_settings, r.strategy,"
            " r.strategy_settings, r.seed, r.label, d.digest FROM runs r"
            f" LEFT JOIN run_data d ON d.run_id = r.id WHERE {condition} ORDER BY r.id"
        ).fetchall()
        return [
            (run_id, key, budget, placeless_key(p, json.loads(ps), s, json.loads(ss), seed, lb, dg))
            for run_id, key, budget, p, ps, s, ss, seed, lb, dg in rows
        ]

    def copy_runs(
        self, source: Journal, keep: Callable[[RunRecord], bool] | None = None
    ) -> tuple[int, int]:
        """Copy the finished runs of ``source``, with their trials and data digests, into
        this journal: runs made on several machines joined into one comparison's journal.
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
                for run_id, key, _, where in self._identities("1")
                for k in (key, where)
                if k
            }
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for source_id, key, _, where in source._identities("r.status = 'finished'"):
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

    def _check_space(self, existing: RunRecord, spec: RunSpec) -> None:
        """Refuse to resume a run whose stored space differs from ``spec``'s (a function
        tuned again with a constraint added or a range widened: its trials and best would
        belong to another space)."""
        changes = space_changes(self.get_run(existing.id).settings.get("space", {}), spec.space)
        if changes:
            more = f"; and {len(changes) - 4} more" if len(changes) > 4 else ""
            shown = "; ".join(changes[:4]) + more
            raise StorageError(
                f"run {existing.id} ({existing.describe()}) in {self.path!r} was made on another "
                f"search space ({shown}): resume it with the space it was made on, or give the "
                "new run another name (label=, --name) or journal (storage=, --db)"
            )

    def _check_data(self, record: RunRecord, digest: str | None) -> None:
        """Record the run's data digest, or refuse other data than the run was made from."""
        if digest is None:
            return
        stored = self.data_digest(record.id)
        if stored is None:
            self._conn.execute(
                "INSERT OR IGNORE INTO run_data (run_id, digest) VALUES (?,?)", (record.id, digest)
            )
        elif stored != digest:
            raise StorageError(
                f"run {record.id} ({record.problem}) in {self.path!r} was made from other data "
                f"(digest {stored[:16]}, now {digest[:16]}): the replayed table changed since; "
                "resume it with the data it was made from, or tune into another journal (--db)"
            )

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
        me = (socket.gethostname(), os.getpid(), _process_started(os.getpid()) or 0.0)
        with self._sql("cannot claim a run in"), self._conn:
            self._conn.execute("BEGIN IMMEDIATE")
            row = self._conn.execute(
                "SELECT host, pid, process_started, since FROM run_owners WHERE run_id=?",
                (run_id,),
            ).fetchone()
            if row is not None and tuple(row[:2]) != me[:2] and self._alive(*row[:3]):
                when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row[3]))
                raise RunOwnedError(
                    f"another process owns run {run_id} of {self.path!r} (pid {row[1]} on "
                    f"{row[0]}, since {when}): let it finish or stop it, then run again; "
                    "nothing was measured"
                )
            self._conn.execute(
                "INSERT OR REPLACE INTO run_owners (run_id, host, pid, process_started, since)"
                " VALUES (?,?,?,?,?)",
                (run_id, *me, time.time()),
            )

    def release_run(self, run_id: int) -> None:
        """Give up ownership of a run (this process's claim only)."""
        with self._sql("cannot release a run in"):
            self._conn.execute(
                "DELETE FROM run_owners WHERE run_id=? AND host=? AND pid=?",
                (run_id, socket.gethostname(), os.getpid()),
            )
        self.checkpoint()  # the run is left (finished or interrupted): the file holds it

    @staticmethod
    def _alive(host: str, pid: int, started: float) -> bool:
        """Whether an owner still runs. An owner on another host is not: a journal in WAL
        mode is only ever shared by processes of one host, so it was copied here."""
        if host != socket.gethostname():
            _log.warning("run owned by pid %s on %s, another host: taken over", pid, host)
            return False
        now = _process_started(pid)
        return now is not None and abs(now - started) < 1.0

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
        return RunRecord(*row[:10], settings=settings)

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
        """Mark a run ``stopped`` and free its key: the run and its trials stay (for the
        record), and opening a run with the same settings starts a new one."""
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
        rows = [self._row(run_id, t) for t in trials]
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

    @staticmethod
    def _row(run_id: int, t: Trial) -> tuple[Any, ...]:
        m = t.measurement
        return (
            run_id,
            t.number,
            dumps(t.config),
            m.status.value,
            m.value,
            dumps(list(m.samples)),
            dumps(dict(m.metrics)),
            m.error,
            dumps(dict(t.info)),
            t.origin.value,
            t.started_at,
            t.duration_s,
        )

    def trials(self, run_id: int) -> list[Trial]:
        """Every trial of a run, in number order."""
        rows = self._conn.execute(
            "SELECT number, config, status, value, samples, metrics, error, info, origin,"
            " started_at, duration_s FROM trials WHERE run_id=? ORDER BY number",
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
