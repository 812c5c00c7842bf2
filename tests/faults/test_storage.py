"""Fault injection on the journal: foreign files, read-only media, a full disk, changed
data, two processes on one run. Readers never write; every failure is one line."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.exceptions import StorageError
from gpautotune.problems import BoothProblem
from gpautotune.storage import Journal, RunOwnedError
from gpautotune.tuner import TuningRun
from tests.faults.processes import env, wait_for
from tests.faults.test_hostile_inputs import one_error_line

runner = CliRunner()
READERS = [
    ["show"],
    ["export", "--csv", "{tmp}/out.csv"],
    ["explain", "--out", "{tmp}/explained"],
    ["report", "--out", "{tmp}/report"],
]


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def _reader(args: list[str], db: Path, tmp: Path) -> list[str]:
    return [args[0], str(db), *(a.format(tmp=tmp) for a in args[1:])]


@pytest.mark.parametrize("kind", ["foreign", "empty"])
@pytest.mark.parametrize("args", READERS, ids=[a[0] for a in READERS])
def test_readers_refuse_a_file_that_is_not_a_journal_and_leave_it_alone(
    tmp_path, kind, args
) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    db = folder / "other.db"
    if kind == "foreign":
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE samples (x REAL)")
    else:
        db.write_bytes(b"")
    before = _files(folder)
    one_error_line(_reader(args, db, tmp_path), "is not a gpautotune journal")
    assert _files(folder) == before  # no table added, no WAL switch, no -wal/-shm file


def _booth_journal(db: Path, budget: int = 6) -> None:
    run = TuningRun(BoothProblem(), "random", storage=db, seed=1, budget=budget)
    while run.remaining:
        for config in run.ask():
            run.tell(config, BoothProblem().evaluate(config))
    run.finish()
    run.journal.close()


@pytest.fixture
def tmpfs(tmp_path):
    """A small tmpfs of our own (root only; skipped where mounting is not allowed)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    cmd = ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]
    if os.geteuid() != 0 or subprocess.run(cmd, capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root (a full disk and read-only media are simulated)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_readers_work_on_read_only_media(tmpfs, tmp_path) -> None:
    _booth_journal(tmpfs / "j.db")
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    before = _files(tmpfs)
    for args in READERS:
        result = runner.invoke(app, _reader(args, tmpfs / "j.db", tmp_path))
        assert result.exit_code == 0, result.output
    assert _files(tmpfs) == before
    config = tmp_path / "b.yaml"
    config.write_text("problem: {name: booth}\nstrategy: {name: random}\nseed: 1\nbudget: 8\n")
    one_error_line(["tune", str(config), "--db", str(tmpfs / "j.db")], "give a writable place")


def test_a_full_disk_is_one_line_and_loses_no_stored_trial(tmpfs, tmp_path) -> None:
    db = tmpfs / "j.db"
    run = TuningRun(BoothProblem(), "random", storage=db, seed=1, budget=400)
    for config in run.ask(5):
        run.tell(config, BoothProblem().evaluate(config))
    filler = tmpfs / "filler"
    with open(filler, "wb", buffering=0) as fh:  # fill the disk to the last byte
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    with pytest.raises(StorageError, match=r"full.*free space.*not stored: \{"):
        for _ in range(200):  # the WAL may still have room for a few pages
            for config in run.ask():
                run.tell(config, BoothProblem().evaluate(config))
    stored = len(run.trials)
    run.journal.close()
    config = tmp_path / "b.yaml"
    config.write_text("problem: {name: booth}\nstrategy: {name: random}\nseed: 1\nbudget: 400\n")
    one_error_line(["tune", str(config), "--db", str(db)], "free space")
    filler.unlink()
    with Journal(db, read_only=True) as journal:
        trials = journal.trials(1)
    assert len(trials) == stored and [t.number for t in trials] == list(range(stored))


def test_a_changed_replay_table_refuses_the_resume(tmp_path) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("x,time\n" + "".join(f"{x},{x + 1}.0\n" for x in range(1, 9)))
    config = tmp_path / "t.yaml"
    config.write_text(
        f"problem:\n  name: replay\n  data: {csv}\n  objective: time\n"
        "  parameters: [{name: x, kind: int, low: 1, high: 8}]\n"
        f"strategy: {{name: random}}\nbudget: 3\nseed: 1\nstorage: {tmp_path / 't.db'}\n"
    )
    assert runner.invoke(app, ["tune", str(config)]).exit_code == 0
    csv.write_text(csv.read_text().replace("4,5.0", "4,0.001"))
    one_error_line(["tune", str(config), "--budget", "8"], "was made from other data")
    with Journal(tmp_path / "t.db", read_only=True) as journal:
        assert len(journal.trials(1)) == 3  # nothing measured on the new table


HOLDER = textwrap.dedent(
    """
    import sys, time
    from gpautotune.problems import BoothProblem
    from gpautotune.tuner import TuningRun
    TuningRun(BoothProblem(), "random", storage=sys.argv[1], seed=1, budget=3)
    open(sys.argv[2], "w").close()
    time.sleep(600)
    """
)


def test_a_second_process_on_a_run_is_refused_before_measuring(tmp_path) -> None:
    db, ready = tmp_path / "j.db", tmp_path / "ready"
    script = tmp_path / "holder.py"
    script.write_text(HOLDER)
    holder = subprocess.Popen([sys.executable, str(script), str(db), str(ready)], env=env())
    try:
        wait_for(ready.exists, 60, "the first process to open the run")
        config = tmp_path / "b.yaml"
        config.write_text("problem: {name: booth}\nstrategy: {name: random}\nseed: 1\nbudget: 3\n")
        line = one_error_line(["tune", str(config), "--db", str(db)], "another process owns run 1")
        assert f"pid {holder.pid}" in line and "nothing was measured" in line
        with pytest.raises(RunOwnedError):
            TuningRun(BoothProblem(), "random", storage=db, seed=1, budget=3)
    finally:
        holder.kill()
        holder.wait()
    result = runner.invoke(app, ["tune", str(config), "--db", str(db)])  # the owner is gone
    assert result.exit_code == 0, result.output
    with Journal(db, read_only=True) as journal:
        assert len(journal.trials(1)) == 3


def test_a_run_that_raised_can_be_resumed_by_another_process(tmp_path) -> None:
    """tune() gives the run up however it ends (a comparison task retried on another
    worker must be able to resume it while this process lives on)."""
    from gpautotune.tuner import tune

    class Crashing(BoothProblem):
        def evaluate(self, config):
            raise KeyboardInterrupt  # not turned into a status: it ends tune()

    db = tmp_path / "j.db"
    with pytest.raises(KeyboardInterrupt):
        tune(Crashing(), "random", 3, storage=db, seed=1)
    claim = "from gpautotune.problems import BoothProblem; from gpautotune.tuner import TuningRun;"
    claim += f" TuningRun(BoothProblem(), 'random', storage={str(db)!r}, seed=1, budget=3)"
    subprocess.run([sys.executable, "-c", claim], env=env(), check=True, timeout=120)
