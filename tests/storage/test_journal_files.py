"""The journal's files: what a reader sees and leaves beside them (the ``-wal`` and
``-shm`` of WAL mode), what a ``.db`` copied alone holds, and journals of other schema
versions. Each test fails without its fix."""

import hashlib
import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.exceptions import StorageError
from gpautotune.problems import Measurement
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal, RunSpec
from gpautotune.storage import _journal as journal_module
from gpautotune.storage._journal import SCHEMA_VERSION
from gpautotune.trial import Trial
from gpautotune.tuner import tune

runner = CliRunner()


def spec(**kw):
    base = dict(
        problem="p", problem_settings={}, strategy="s", strategy_settings={}, seed=1, space={}
    )
    return RunSpec(**{**base, **kw})


def add(journal, run_id, numbers):
    journal.add_trials(run_id, [Trial(i, {"x": i}, Measurement.success(float(i))) for i in numbers])


def files(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def numbers(path):
    with Journal(path, read_only=True) as j:
        return [t.number for t in j.trials(1)]


# ----------------------------------------------------------------- fault 2: the -wal


@pytest.mark.parametrize("checkpointed", [5, 0], ids=["stale-db", "all-in-wal"])
def test_a_reader_refuses_a_wal_it_cannot_read_instead_of_a_stale_journal(tmp_path, checkpointed):
    """On read-only media SQLite reads a ``-wal`` only through its ``-shm`` index, which it
    cannot make there; ``immutable`` would show the file alone (5 of 10 trials, or none:
    "not a journal"). A dangling ``-shm`` link stands in for read-only media (no root)."""
    db = tmp_path / "j.db"
    if checkpointed:
        with Journal(db) as j:
            add(j, j.open_run(spec(), 10).id, range(checkpointed))
    writer = Journal(db)  # still open: as after a kill -9, its trials are in the -wal
    add(writer, writer.open_run(spec(), 10).id, range(checkpointed, 10))
    media = tmp_path / "media"
    media.mkdir()
    shutil.copy(db, media / "j.db")
    shutil.copy(f"{db}-wal", media / "j.db-wal")
    (media / "j.db-shm").symlink_to(tmp_path / "nowhere" / "j.db-shm")
    with pytest.raises(StorageError) as info:
        Journal(media / "j.db", read_only=True)
    text = str(info.value)
    assert "committed since its last checkpoint are in 'j.db-wal'" in text and "\n" not in text
    assert "copy 'j.db' and 'j.db-wal' together to a writable folder" in text
    copy = tmp_path / "copy"  # the advice works
    copy.mkdir()
    shutil.copy(media / "j.db", copy)
    shutil.copy(media / "j.db-wal", copy)
    assert numbers(copy / "j.db") == list(range(10))
    writer.close()


def test_a_finished_run_and_a_closed_writer_leave_every_trial_in_the_file_alone(tmp_path):
    """While another process has the journal open SQLite does not checkpoint at close; a
    finished run, a closed writer, a run left and a long run (periodically) do: a ``.db``
    copied without its ``-wal`` then holds their trials."""
    db = tmp_path / "j.db"
    other = Journal(db)  # another process's connection
    lone = tmp_path / "lone.db"

    def copied_alone():
        shutil.copy(db, lone)
        return numbers(lone)

    j = Journal(db)
    run = j.open_run(spec(), 10)
    add(j, run.id, range(3))
    j.finish_run(run.id)
    assert copied_alone() == [0, 1, 2]
    add(j, run.id, range(3, 6))
    j.close()
    assert copied_alone() == list(range(6))
    j = Journal(db)
    j.claim_run(run.id)
    add(j, run.id, [6])
    assert copied_alone() == list(range(6))  # no checkpoint per trial (it costs an fsync)
    j.release_run(run.id)  # a run left (interrupted)
    assert copied_alone() == list(range(7))
    add(j, run.id, [7])
    j._checkpointed -= journal_module.CHECKPOINT_EVERY_S
    add(j, run.id, [8])
    assert copied_alone() == list(range(9))
    j.close()
    other.close()


# ---------------------------------------------------- fault 3: schema versions, columns


def journal_with(path, *sql, seed=1):
    """A journal with one run of 2 trials, then changed by ``sql``."""
    with Journal(path) as j:
        add(j, j.open_run(spec(seed=seed), 4).id, range(2))
    conn = sqlite3.connect(path)
    for statement in sql:
        conn.execute(statement)
    conn.commit()
    conn.close()
    return path


def rebuilt(table, columns, values):
    """SQL that rebuilds ``table`` with ``columns`` (DDL text), its rows ``values``."""
    return [
        f"CREATE TABLE old AS SELECT * FROM {table}",
        f"DROP TABLE {table}",
        f"CREATE TABLE {table} ({columns})",
        f"INSERT INTO {table} SELECT {values} FROM old",
        "DROP TABLE old",
    ]


TRIALS = (
    "id INTEGER PRIMARY KEY AUTOINCREMENT, run_id INTEGER NOT NULL, number INTEGER NOT NULL,"
    " config TEXT NOT NULL, status TEXT NOT NULL, value REAL, samples TEXT NOT NULL,"
    " metrics TEXT NOT NULL, error TEXT, info TEXT NOT NULL, origin TEXT NOT NULL,"
    " started_at REAL NOT NULL, duration_s REAL NOT NULL"
)
UNTIMED = (
    "id, run_id, number, config, status, value, samples, metrics, error, info, origin, started_at"
)


def test_journals_are_stamped_with_their_schema_version(tmp_path):
    Journal(tmp_path / "j.db").close()
    conn = sqlite3.connect(tmp_path / "j.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 1


def test_a_journal_of_a_newer_version_is_refused_at_open_and_left_alone(tmp_path):
    db = journal_with(tmp_path / "j.db", f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    before = files(tmp_path)
    for read_only in (False, True):
        with pytest.raises(StorageError, match="written by a newer gpautotune .*version 2.*up"):
            Journal(db, read_only=read_only)
    assert files(tmp_path) == before


@pytest.mark.parametrize(
    ("change", "writing", "reading"),
    [
        (
            rebuilt("trials", f"{TRIALS}, device TEXT NOT NULL", "*, 'gpu0'"),
            "requires column.*device",
            None,
        ),
        (
            rebuilt("trials", TRIALS.removesuffix(", duration_s REAL NOT NULL"), UNTIMED),
            "trials .* lacks column.*duration_s",
            "lacks",
        ),
        (["ALTER TABLE runs DROP COLUMN label"], "runs .* lacks column.*label", "lacks"),
    ],
    ids=["not-null-column-added", "trials-column-dropped", "runs-column-dropped"],
)
def test_a_journal_this_code_cannot_write_is_refused_before_anything_is_measured(
    tmp_path, change, writing, reading
):
    db = journal_with(tmp_path / "j.db", *change)
    before = files(tmp_path)
    measured = []

    def objective(config):
        measured.append(config)
        return float(config["x"])

    with pytest.raises(StorageError, match=f"{writing}.*another version or program") as info:
        tune(objective, "random", 4, space=Space([IntRange("x", 0, 9)]), storage=db, seed=1)
    assert measured == [] and "\n" not in str(info.value)
    assert files(tmp_path) == before  # no WAL switch, no table added
    if reading is None:  # a reader can still show it
        assert numbers(db) == [0, 1]
    else:
        with pytest.raises(StorageError, match=reading):
            Journal(db, read_only=True)


def test_journals_of_earlier_versions_still_open_and_resume(tmp_path):
    """Version 0 (before stamping), without the newer tables, or with a nullable column
    added: read, then resumed (the tables added and the version stamped)."""
    db = journal_with(
        tmp_path / "j.db",
        "PRAGMA user_version=0",
        "DROP TABLE report_settings",
        "DROP TABLE running_trials",
        "ALTER TABLE trials ADD COLUMN note TEXT",
    )
    assert numbers(db) == [0, 1]
    with Journal(db) as j:
        run = j.open_run(spec(), 4)
        add(j, run.id, [2, 3])
        j.record_report_settings({"a": 1})
    assert numbers(db) == [0, 1, 2, 3]
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_runs_are_merged_between_journals_whose_columns_differ(tmp_path):
    """A nullable column one journal has and the other lacks is left out of the copy."""
    source = journal_with(tmp_path / "a.db", "UPDATE runs SET status='finished'", seed=2)
    target = journal_with(tmp_path / "b.db", "ALTER TABLE trials ADD COLUMN note TEXT")
    with Journal(target) as b, Journal(source, read_only=True) as a:
        assert b.copy_runs(a) == (1, 0)
        assert [(r.seed, len(b.trials(r.id))) for r in b.runs()] == [(1, 2), (2, 2)]


# ------------------------------------------------- 9: readers leave no files behind


def test_readers_leave_no_file_beside_a_clean_journal(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "j.db"
    with Journal(db) as j:
        run = j.open_run(spec(problem="booth", space={}), 3)
        add(j, run.id, range(3))
        j.finish_run(run.id)
    before = files(folder)
    assert set(before) == {"j.db"}
    assert numbers(db) == [0, 1, 2]
    for args in (["show", str(db)], ["export", str(db), "--csv", str(tmp_path / "t.csv")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    assert files(folder) == before


def test_a_reader_sees_the_trials_of_a_writer_at_work(tmp_path):
    """Beside a writer's ``-wal`` a reader reads it (not the file alone)."""
    writer = Journal(tmp_path / "j.db")
    run = writer.open_run(spec(), 5)
    add(writer, run.id, range(3))
    assert numbers(tmp_path / "j.db") == [0, 1, 2]
    writer.close()
