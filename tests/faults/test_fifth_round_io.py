"""Mistakes found by the fifth round of trying the product as a new user (2026-12-07,
late): an export onto the journal it reads, explain's options checked late and its
default folder, a 0-byte journal. Each test fails without its fix."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.cli._inspect import _explain_folder
from gpautotune.space import IntRange, PowerOfTwo, Space
from gpautotune.tuner import TuningRun
from tests.faults.test_hostile_inputs import one_error_line

runner = CliRunner()


def _journal(path: Path, value=lambda c: c["tile"] / c["unroll"]) -> Path:
    space = Space([PowerOfTwo("tile", 4, 64), IntRange("unroll", 1, 4)])
    with TuningRun(space, "random", storage=path, seed=1, budget=6) as run:
        while not run.finished:
            for config in run.ask():
                run.tell(config, value(config))
    return path


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize(
    "options",
    [
        ["--t4", "j.db"],
        ["--csv", "j.db"],
        ["--parquet", "./j.db"],
        ["--t4", "link.db"],
        ["--csv", "j.db-wal"],
        ["--parquet", "j.db-shm"],
        ["--csv", "fine.csv", "--t4", "j.db"],  # nothing written, not even the good one
    ],
)
def test_export_refuses_to_write_over_the_journal_it_reads(tmp_path, monkeypatch, options):
    monkeypatch.chdir(tmp_path)
    _journal(tmp_path / "j.db")
    (tmp_path / "link.db").symlink_to("j.db")
    before = _files(tmp_path)
    line = one_error_line(["export", "j.db", "--run", "1", *options], "the journal it reads")
    assert line.startswith("error: export: the output") and "give another path" in line
    assert _files(tmp_path) == before


@pytest.mark.parametrize(
    ("option", "fragment"),
    [
        (["--domain", "vald"], "domain must be 'box' or 'valid', not 'vald'"),
        (["--paths", "0"], "paths (GP posterior sample paths) must be >= 1, got 0"),
    ],
)
def test_explain_checks_its_options_before_reading_the_journal(tmp_path, option, fragment):
    db = tmp_path / "not-a-journal.db"
    db.write_text("no journal here")  # read first, it would be refused for that instead
    one_error_line(["explain", str(db), *option], fragment)


def test_explain_of_a_journal_without_suffix_writes_beside_it_not_into_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _journal(tmp_path / "runsj", value=lambda c: 1.0)  # constant: nothing to fit, fast
    before = (tmp_path / "runsj").read_bytes()
    result = runner.invoke(app, ["explain", "runsj"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "runsj-explain").iterdir())[0] == "run1-sobol-box.csv"
    assert (tmp_path / "runsj").read_bytes() == before
    assert _explain_folder(Path("results/runs.db")) == Path("results/runs")  # as before
    assert _explain_folder(Path("results/.db")) == Path("results/.db-explain")


def test_tune_into_an_empty_file_says_it_is_empty_and_leaves_it(tmp_path):
    config = tmp_path / "b.yaml"
    config.write_text("problem: {name: booth}\nstrategy: {name: random}\nbudget: 2\n")
    (tmp_path / "empty.db").write_bytes(b"")
    line = one_error_line(
        ["tune", str(config), "--db", str(tmp_path / "empty.db")], "an empty file (0 bytes)"
    )
    assert "remove it or give another path" in line and "no such table" not in line
    assert (tmp_path / "empty.db").read_bytes() == b""
