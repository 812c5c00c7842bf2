"""A repetition whose run another live process owns: it waits for the owner instead of
being retried at once by Dask, and a failure is one readable line, not a repr."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from gpautotune.cli import app
from gpautotune.comparison import ComparisonResult, expand, load_comparison, run_repetition
from gpautotune.comparison import _dask as comparison_dask
from gpautotune.config import build_problem
from gpautotune.storage import Journal

FILE = """
problems: [{name: booth}]
strategies: [{name: random, label: RS}]
repetitions: 1
budget: 4
seed: 1
storage: STORAGE
"""


@pytest.fixture
def repetition(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(FILE.replace("STORAGE", str(tmp_path / "c.db")))
    config = load_comparison(path)
    (rep,) = expand(config, [build_problem(config.problems[0], factory_names=True)])
    return rep


def _owned_by(db: str, run_id: int, pid: int, monkeypatch) -> None:
    """Record ``pid`` (a live process of this host) as the owner of the run."""
    with Journal(db) as journal, monkeypatch.context() as m:
        m.setattr(os, "getpid", lambda: pid)
        journal.claim_run(run_id)


def _trials(db: str, run_id: int) -> int:
    with Journal(db, read_only=True) as journal:
        return len(journal.trials(run_id))


def test_a_run_owned_by_a_live_process_fails_once_saying_so(repetition, monkeypatch):
    """Not raised (Dask would log a traceback and retry within milliseconds): a failed
    outcome naming the owner, with nothing measured."""
    first = run_repetition(repetition)
    owner = subprocess.Popen(["sleep", "30"])
    try:
        _owned_by(repetition.storage, first.run_id, owner.pid, monkeypatch)
        longer = replace(repetition, budget=6)
        outcome = run_repetition(longer, owner_wait_s=0.0)
        waited = run_repetition(longer, owner_wait_s=0.6)
    finally:
        owner.kill()
        owner.wait()
    assert not outcome.ok and outcome.used == 0
    assert outcome.error.startswith(f"RunOwnedError: another process owns run {first.run_id}")
    assert f"pid {owner.pid}" in outcome.error and "waited" not in outcome.error
    assert not waited.ok and waited.error.endswith("(waited 0.5 s for it)")
    assert _trials(repetition.storage, first.run_id) == 4  # nothing measured meanwhile


def test_a_repetition_waits_for_the_owner_to_let_go_then_resumes(repetition, monkeypatch):
    first = run_repetition(repetition)
    owner = subprocess.Popen(["sleep", "0.8"])  # a process that ends while it is waited for
    try:
        _owned_by(repetition.storage, first.run_id, owner.pid, monkeypatch)
        start = time.perf_counter()
        outcome = run_repetition(replace(repetition, budget=6), owner_wait_s=10)
    finally:
        owner.kill()
        owner.wait()
    assert outcome.ok and outcome.run_id == first.run_id and outcome.used == 6
    assert 0.8 <= time.perf_counter() - start < 5  # backed off, then went on
    assert _trials(repetition.storage, first.run_id) == 6


def test_a_failed_repetition_is_one_line_in_compare(repetition, tmp_path, monkeypatch):
    error = (
        "RunOwnedError: another process owns run 6 of 'c.db' (pid 17 on vm, since "
        "2026-12-07 14:18:34): let it finish or stop it, then\nrun again; nothing was measured"
    )
    failed = comparison_dask.RepetitionOutcome(repetition, -1, 0, None, 0.0, "", error)
    config = load_comparison(tmp_path / "c.yaml")
    result = ComparisonResult(config, repetition.storage, 1, 0, [failed], 1.0, 1)
    monkeypatch.setattr("gpautotune.comparison.run_comparison", lambda *a, **k: result)
    monkeypatch.setattr("gpautotune.cli._compare._write_report", lambda *a: None)
    out = CliRunner().invoke(app, ["compare", str(tmp_path / "c.yaml"), "--out", str(tmp_path)])
    assert out.exit_code == 1
    (line,) = [x for x in out.output.splitlines() if x.startswith("failed")]
    assert line == f"failed: booth / RS / seed 1: {' '.join(error.split())}"
    assert "RepetitionOutcome(" not in out.output


def test_a_long_error_is_cut_in_its_line(repetition):
    failed = comparison_dask.RepetitionOutcome(repetition, -1, 0, None, 0.0, "", "E: " + "x" * 900)
    line = failed.describe()
    assert line.startswith("booth / RS / seed 1: E: x") and line.endswith("...")
    assert len(line) < 450 and "\n" not in line


def test_the_cli_lists_ten_failures_and_counts_the_rest(repetition, tmp_path, monkeypatch):
    failed = [
        comparison_dask.RepetitionOutcome(repetition, -1, 0, None, 0.0, "", f"E: {i}")
        for i in range(12)
    ]
    config = load_comparison(tmp_path / "c.yaml")
    result = ComparisonResult(config, repetition.storage, 12, 0, failed, 1.0, 1)
    monkeypatch.setattr("gpautotune.comparison.run_comparison", lambda *a, **k: result)
    monkeypatch.setattr("gpautotune.cli._compare._write_report", lambda *a: None)
    out = CliRunner().invoke(app, ["compare", str(tmp_path / "c.yaml"), "--out", str(tmp_path)])
    assert sum(x.startswith("failed: ") for x in out.output.splitlines()) == 10
    assert "and 2 more failed repetitions" in out.output
