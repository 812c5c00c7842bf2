"""Opening a journal's database: the connection a writer or a reader gets, and the checks
that refuse, at open, a file this code cannot use.

A writer makes the folder, checks the file, and sets WAL mode and the tables. A reader
writes nothing and leaves no file beside a clean journal: it reads the file whole into
memory through ``immutable`` where no writer is at work (:func:`_snapshot`), else opens it
``mode=ro``; it refuses a ``-wal`` it cannot read (read-only media) rather than show a
stale journal. Journals are stamped with ``SCHEMA_VERSION``: a newer one, or one whose
tables this code cannot write (or, to read, lacks a column it uses), is refused.

Kept apart from :class:`~gpautotune.storage.Journal` (which holds the open connection and
every query on it): how a file becomes a connection, and which files are refused, is one
concept, with its own failure modes, that no query needs to know about.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gpautotune.exceptions import ConfigError, StorageError
from gpautotune.storage._schema import HINTS, SCHEMA

__all__ = [
    "SCHEMA_VERSION",
    "check_not_journal",
    "open_read_only",
    "open_writer",
    "sql_errors",
]

#: The files SQLite keeps beside a journal ``j.db``: ``j.db-wal``, ``j.db-shm``, ``j.db-journal``.
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")

#: The journal schema version this code writes (``PRAGMA user_version``); version 0 is a
#: journal written before versions were stamped (the same tables, or fewer of them).
SCHEMA_VERSION = 1


@contextlib.contextmanager
def sql_errors(path: str, what: str) -> Iterator[None]:
    """Database failures as one :class:`StorageError` naming the journal and a fix."""
    try:
        yield
    except sqlite3.Error as exc:
        text = str(exc)
        hint = next((h for k, h in HINTS.items() if k in text), None)
        if "unable to open" in text and _read_only_place(path):  # SQLite does not say why
            hint = HINTS["readonly"]
        suffix = f": {hint}" if hint else ""
        raise StorageError(f"{what} {path!r}: {text}{suffix}") from None


def _read_only_place(path: str) -> bool:
    """Whether the journal at ``path``, or the folder it would be made in, exists and
    cannot be written (a read-only file, folder or medium)."""
    if path == ":memory:" or path.startswith("file:"):
        return False
    target = Path(path) if Path(path).exists() else Path(path).parent
    return target.exists() and not os.access(target, os.W_OK)


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


def check_not_journal(journal: str, path: str | os.PathLike[str], what: str) -> None:
    """Refuse ``path`` as a file ``what`` (``"export"``) writes where it is the journal
    at ``journal`` that ``what`` reads, or one of its side files (``-wal``, ``-shm``,
    ``-journal``): writing it would lose every run. Links are followed (a link to the
    journal is the journal), and an existing file is compared by identity (a hard link).

    Raises:
        ConfigError: ``path`` is the journal or a side file of it.
    """
    if journal == ":memory:":
        return
    given, out = Path(journal).expanduser(), Path(path).expanduser()
    for base in {given.absolute(), given.resolve()}:  # SQLite's sides are beside either
        for suffix in ("", *SIDE_SUFFIXES):
            target = Path(f"{base}{suffix}")
            if out.resolve() == target.resolve() or _same_file(out, target):
                which = "a side file of the journal" if suffix else "the journal"
                named = "" if str(path) == journal else f" ({journal!r})"
                raise ConfigError(
                    f"{what}: the output {str(path)!r} is {which} it reads{named}; "
                    "give another path"
                )


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` both exist and are one file (also through a hard link)."""
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


# ------------------------------------------------------------------------- writers
def open_writer(path: str) -> sqlite3.Connection:
    """A connection that writes the journal at ``path`` (made with its folder if missing,
    ``":memory:"`` too), in WAL mode, with the tables of ``SCHEMA`` and stamped with
    ``SCHEMA_VERSION``; a file this code cannot write is refused (see
    :func:`_check_tables`)."""
    if path != ":memory:":
        folder = Path(path).expanduser().parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot make the folder of trial journal {path!r}: "
                f"{exc.strerror or exc} ({exc.filename or folder})"
            ) from None
    with sql_errors(path, "cannot open trial journal"):
        conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
        try:
            _check_tables(conn, path)
        except StorageError:
            conn.close()
            raise
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=60000")
        conn.executescript(SCHEMA)
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    return conn


def _check_tables(conn: sqlite3.Connection, path: str) -> None:
    """Refuse, before anything is written or measured, a database of another
    application (tables but no ``runs``: every journal, of any version, has it) and a
    journal this code cannot write (see :func:`_check_schema`)."""
    tables = {
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    if tables and "runs" not in tables:
        raise StorageError(
            f"{path!r} holds other tables: not a gpautotune journal "
            f"({', '.join(sorted(tables))}); give another place (--db)"
        )
    if tables:
        _check_schema(conn, path, writing=True)


def _check_schema(conn: sqlite3.Connection, path: str, *, writing: bool) -> None:
    """Refuse a journal of a newer gpautotune (a higher ``user_version``: its tables
    may mean something else), and one whose ``runs`` or ``trials`` lack a column this
    code uses or (to write) require one it does not write: found at open, not when
    the first measurement is stored and lost. Journals of earlier versions (version
    0, perhaps without the newer tables) pass: opening one to write adds the tables."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StorageError(
            f"{path!r} was written by a newer gpautotune (journal schema version "
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
            f"table {table} of {path!r} {problem}: the journal was made by another "
            "version or program; open it with the gpautotune that made it, or give "
            "another journal (--db)"
        )


# ------------------------------------------------------------------------- readers
def open_read_only(path: str) -> sqlite3.Connection:
    """Open without ever writing (nor leaving files beside the journal, see
    :func:`_snapshot`); the file must hold a journal's tables, of a version this code
    reads (:func:`_check_schema`). An empty file (0 bytes, what ``touch`` makes) is
    refused too, saying so: SQLite would read it as a database without tables.

    Raises:
        StorageError: the file does not exist, is empty, or is not a journal this code
            reads.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise StorageError(f"journal {path!r} does not exist")
    if file.stat().st_size == 0 and not Path(f"{file}-wal").exists():
        raise StorageError(
            f"{path!r} is not a gpautotune journal: it is an empty file (0 bytes); "
            "remove it or give another path"
        )
    try:
        conn = _snapshot(file) or _connect_read_only(file, path)
    except sqlite3.DatabaseError as exc:  # not a database at all
        raise StorageError(f"{path!r} is not a gpautotune journal: {exc}") from None
    try:
        conn.execute("SELECT id, key FROM runs LIMIT 1").fetchall()
        conn.execute("SELECT run_id, number FROM trials LIMIT 1").fetchall()
        _check_schema(conn, path, writing=False)
    except sqlite3.DatabaseError as exc:  # no such table, or not a database at all
        conn.close()
        raise StorageError(f"{path!r} is not a gpautotune journal: {exc}") from None
    except StorageError:
        conn.close()
        raise
    return conn


def _snapshot(file: Path) -> sqlite3.Connection | None:
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


def _connect_read_only(file: Path, path: str) -> sqlite3.Connection:
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
            f"cannot read {path!r} here: the trials committed since its last "
            f"checkpoint are in {wal.name!r} beside it, which SQLite reads only where it "
            f"can write {file.name + '-shm'!r}; copy {file.name!r} and {wal.name!r} "
            "together to a writable folder and read the copy, or open it where it is "
            "writable"
        )
    return sqlite3.connect(f"{uri}?immutable=1", uri=True)
