"""User mistakes the CLI once answered with a traceback or silently: each is one line
``error: ...`` with exit code 2 now."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from tests.storage.kt_files import small_cache, write_json

runner = CliRunner()


@pytest.fixture
def booth_db(booth_yaml, tmp_path):
    assert runner.invoke(app, ["tune", str(booth_yaml)]).exit_code == 0
    return str(tmp_path / "b.db")


def _one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and result.output.rstrip().endswith(errors[0]), result.output
    for word in words:
        assert word in errors[0], result.output


def _warm(tmp_path, name: str, content: bytes) -> str:
    (tmp_path / name).write_bytes(content)
    path = tmp_path / "warm.yaml"
    path.write_text(
        "problem: {name: booth}\nstrategy: {name: sobol}\nbudget: 3\nseed: 2\n"
        f"storage: {tmp_path / 'w.db'}\nwarm_start: {tmp_path / name}\n"
    )
    return str(path)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"x1,x2,value\n1,3,abc\n", ["row 2", "'value'", "'abc' is not a number"]),
        (b"x1,x2,value,status\n1,3,1.0,bogus\n", ["row 2", "'status'", "'bogus'", "run_error"]),
        (b"", ["is empty", "header row"]),
        (b"\xff\xfe\x00x\x001\n\xff\xff", ["not UTF-8"]),
    ],
)
def test_warm_start_csv_mistakes_are_one_line(tmp_path, content, words):
    result = runner.invoke(app, ["tune", _warm(tmp_path, "ws.csv", content)])
    _one_line_error(result, "ws.csv", *words)


def test_unwritable_outputs_are_one_line(booth_db, tmp_path):
    a_file, a_folder = tmp_path / "f.txt", tmp_path / "d.csv"
    a_file.write_text("x")
    a_folder.mkdir()
    for args in (
        ["report", booth_db, "--out", str(a_file)],
        ["report", booth_db, "--out", str(a_file / "sub")],
        ["explain", booth_db, "--out", str(a_file), "--paths", "2"],
        ["export", booth_db, "--csv", str(a_folder)],
        ["export", booth_db, "--parquet", str(a_file / "t.parquet")],
        ["export", booth_db, "--t4", str(a_folder)],
    ):
        _one_line_error(runner.invoke(app, args), "cannot write")


def test_compare_checks_its_report_folder_before_running(tmp_path):
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    path = tmp_path / "c.yaml"
    path.write_text(
        "problems: [{name: booth}]\nstrategies: [{name: random}]\nrepetitions: 1\n"
        f"budget: 3\nstorage: {tmp_path / 'c.db'}\noutput: {a_file}\n"
    )
    result = runner.invoke(app, ["compare", str(path), "--workers", "1"])
    _one_line_error(result, "cannot write the report", "is a file")
    assert not (tmp_path / "c.db").exists()  # nothing ran
    result = runner.invoke(app, ["compare", str(path), "--workers", "0"])
    _one_line_error(result, "workers must be >= 1")


def test_a_scheduler_address_without_a_port_is_one_line(booth_yaml):
    result = runner.invoke(app, ["tune", str(booth_yaml), "--scheduler", "foo"])
    _one_line_error(result, "'foo'", "tcp://HOST:PORT")


def test_export_writes_the_format_its_option_names(booth_db, tmp_path):
    result = runner.invoke(
        app,
        [
            "export",
            booth_db,
            "--parquet",
            str(tmp_path / "p.csv"),
            "--csv",
            str(tmp_path / "c.txt"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "p.csv").read_bytes()[:4] == b"PAR1"
    assert len(pd.read_parquet(tmp_path / "p.csv")) == 12
    assert len(pd.read_csv(tmp_path / "c.txt")) == 12


def test_explain_rebuilds_a_tuned_kt_cache_from_the_runs_settings(tmp_path, monkeypatch):
    """`tune` of a Kernel Tuner cache, then `explain` (docs/kt-caches.md): the row
    predicate's text is no expression; the space comes from the stored path."""
    monkeypatch.chdir(tmp_path)
    write_json(tmp_path / "cache.json.gz", small_cache(), gz=True)
    path = tmp_path / "kt.yaml"
    path.write_text(
        "problem: {name: kt-cache, path: cache.json.gz}\nstrategy: {name: random}\n"
        f"budget: 8\nseed: 4\nstorage: {tmp_path / 'kt.db'}\n"
    )
    assert runner.invoke(app, ["tune", str(path)]).exit_code == 0
    result = runner.invoke(app, ["explain", "kt.db", "--paths", "2", "--out", "x"])
    assert result.exit_code == 0, result.output
    assert "chart:" in result.output
    (tmp_path / "cache.json.gz").rename(tmp_path / "moved.json.gz")
    result = runner.invoke(app, ["explain", "kt.db", "--paths", "2", "--out", "x"])
    _one_line_error(result, "replayed file 'cache.json.gz'")
    assert "leading zeros" not in result.output


def test_show_refuses_a_negative_top(booth_db):
    _one_line_error(runner.invoke(app, ["show", booth_db, "--top", "-1"]), "--top")


@pytest.mark.parametrize("checkpoint", ["0", "-4", "500"])
def test_report_refuses_a_checkpoint_outside_the_budget(booth_db, tmp_path, checkpoint):
    result = runner.invoke(
        app, ["report", booth_db, "--checkpoint", checkpoint, "--out", str(tmp_path / "r")]
    )
    _one_line_error(result, "checkpoint", checkpoint)


def test_an_error_with_brackets_is_printed_as_text(tmp_path):
    path = tmp_path / "l.yaml"
    path.write_text("problem: {name: laplacian, sizes: '[/b]x9'}\nbudget: 2\n")
    _one_line_error(runner.invoke(app, ["space", str(path)]), "[width, height]", "[/b]x9")


def test_an_empty_journal_path_is_refused_naming_the_option(booth_yaml, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _one_line_error(runner.invoke(app, ["tune", str(booth_yaml), "--db", ""]), "--db is empty")
    empty = tmp_path / "e.yaml"
    empty.write_text("problem: {name: booth}\nbudget: 3\nstorage: ''\n")
    _one_line_error(runner.invoke(app, ["tune", str(empty)]), "storage: is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["booth.yaml", "e.yaml"]


def test_show_tells_an_interrupted_run_from_a_running_one(booth_db):
    """A run left ``running`` by a process that is gone (killed, its machine stopped) is
    shown as interrupted; one whose owner still runs, as running."""
    import socket
    import sqlite3
    import subprocess
    import sys

    from gpautotune.storage import Journal

    with sqlite3.connect(booth_db) as conn:
        conn.execute("UPDATE runs SET status='running' WHERE id=1")
    with Journal(booth_db) as journal:
        journal.claim_run(1)  # this process: alive
        assert "running" in _status(booth_db)
        journal.release_run(1)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    with sqlite3.connect(booth_db) as conn:  # its owner: a process that has ended
        conn.execute(
            "INSERT OR REPLACE INTO run_owners (run_id, host, pid, process_started, since) "
            "VALUES (1, ?, ?, 1.0, 0)",
            (socket.gethostname(), int(gone.stdout)),
        )
    assert _status(booth_db) == "interrupted"


def _status(db: str) -> str:
    """The status column of ``show``'s first run."""
    output = runner.invoke(app, ["show", db, "--top", "0"], env={"COLUMNS": "300"}).output
    row = next(line for line in output.splitlines() if line.startswith("│ 1 "))
    return row.strip("│ ").split("│")[-1].strip()
