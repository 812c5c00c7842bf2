"""Comparisons on a real Dask cluster (loopback): once-only repetitions, resume, crashes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpautotune.comparison import dask_client, run_comparison
from gpautotune.problems import BoothProblem
from gpautotune.storage import Journal
from gpautotune.tuner import tune

ROOT = Path(__file__).resolve().parents[2]
HELPERS = "tests.comparison.faulty_problems"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scheduler():
    """A two-worker local cluster shared by the tests, reached by its address."""
    with dask_client(workers=2) as client:
        yield client.scheduler.address


def _config(
    tmp_path: Path, problem: str, *, repetitions: int, budget: int, extra: str = ""
) -> Path:
    path = tmp_path / "compare.yaml"
    path.write_text(
        textwrap.dedent(f"""
        problems: [{problem}]
        strategies:
          - {{name: random, label: RS}}
          - {{name: sobol, label: Sobol}}
        repetitions: {repetitions}
        budget: {budget}
        seed: 3
        storage: {tmp_path / "c.db"}
        """)
        + extra
    )
    return path


def _check_runs(db: Path, expected_runs: int, budget: int) -> None:
    """Every repetition stored once, each with trials 0..budget-1, exactly the trials of
    an uninterrupted in-memory run (the problems here all have Booth's space and values)."""
    with Journal(db) as journal:
        runs = journal.runs()
        assert len(runs) == expected_runs
        assert len({(r.strategy, r.seed, r.label) for r in runs}) == expected_runs
        for run in runs:
            assert run.status == "finished"
            trials = journal.trials(run.id)
            assert [t.number for t in trials] == list(range(budget))
            reference = tune(BoothProblem(), run.strategy, budget, seed=run.seed)
            assert [t.config for t in trials] == [t.config for t in reference.trials]
            assert [t.value for t in trials] == [t.value for t in reference.trials]


def test_runs_each_repetition_once_and_skips_finished_ones(tmp_path, scheduler):
    cfg = _config(tmp_path, "{name: booth}", repetitions=3, budget=10)
    first = run_comparison(cfg, scheduler=scheduler, only=["RS"])  # a strategy added later: Sobol
    assert first.total == 3 and first.completed == 3
    calls = []
    result = run_comparison(
        cfg, scheduler=scheduler, progress=lambda d, t, o: calls.append((d, t, o))
    )
    assert result.total == 6 and result.skipped == 3 and not result.failed and result.completed == 6
    assert {o.repetition.label for o in result.outcomes} == {"Sobol"}
    assert calls[0] == (3, 6, None) and [c[0] for c in calls] == list(range(3, 7))
    _check_runs(tmp_path / "c.db", 6, 10)
    again = run_comparison(cfg, scheduler=scheduler, storage=tmp_path / "c.db")
    assert (
        again.skipped == 6 and again.outcomes == [] and again.workers == 0
    )  # nothing left: no cluster


def test_a_table_read_from_another_folder_resumes_its_runs(tmp_path, scheduler):
    """A journal brought to another machine (the table elsewhere, the same rows): its runs
    are the comparison's, not made again; a changed table is another run."""
    rows = "x,y,time\n" + "".join(
        f"{x},{y},{(x - 1) ** 2 + (y + 3) ** 2 + 1}.0\n" for x in range(-4, 5) for y in range(-4, 5)
    )
    folders = [tmp_path / "here", tmp_path / "there", tmp_path / "changed"]
    for folder in folders:
        folder.mkdir()
        folder.joinpath("t.csv").write_text(rows)
    folders[2].joinpath("t.csv").write_text(rows.replace("-4,-4,27.0", "-4,-4,0.5"))

    def replay(folder: Path) -> str:
        return (
            f"{{name: replay, data: {folder / 't.csv'}, objective: time, parameters: "
            "[{name: x, kind: int, low: -4, high: 4}, {name: y, kind: int, low: -4, high: 4}]}"
        )

    first = run_comparison(
        _config(tmp_path, replay(folders[0]), repetitions=2, budget=5), scheduler=scheduler
    )
    assert first.completed == 4
    moved = run_comparison(
        _config(tmp_path, replay(folders[1]), repetitions=2, budget=5), scheduler=scheduler
    )
    assert moved.skipped == 4 and moved.outcomes == []
    changed = run_comparison(
        _config(tmp_path, replay(folders[2]), repetitions=2, budget=5), scheduler=scheduler
    )
    assert changed.skipped == 0 and changed.completed == 4
    with Journal(tmp_path / "c.db") as journal:
        assert len(journal.runs()) == 8


def test_larger_budget_extends_the_stored_runs(tmp_path, scheduler):
    cfg = _config(tmp_path, "{name: booth}", repetitions=2, budget=6)
    run_comparison(cfg, scheduler=scheduler)
    cfg.write_text(cfg.read_text().replace("budget: 6", "budget: 9"))
    result = run_comparison(cfg, scheduler=scheduler)
    assert (
        result.skipped == 0
        and len(result.outcomes) == 4
        and all(o.used == 9 for o in result.outcomes)
    )
    _check_runs(tmp_path / "c.db", 4, 9)


def test_a_worker_killed_mid_task_loses_and_duplicates_nothing(tmp_path, scheduler):
    marker = tmp_path / "killed"
    problem = f"{{name: '{HELPERS}:KillOnceBooth', marker: '{marker}', after: 4}}"
    result = run_comparison(
        _config(tmp_path, problem, repetitions=2, budget=8),
        scheduler=scheduler,
        allow_imports=True,
    )
    assert marker.is_file()  # a worker process did die in the middle of a repetition
    assert not result.failed and len(result.outcomes) == 4
    _check_runs(tmp_path / "c.db", 4, 8)


def test_hardware_repetitions_run_one_at_a_time(tmp_path, scheduler):
    problem = f"{{name: '{HELPERS}:SlowBooth', delay_s: 0.02, hardware: true}}"
    result = run_comparison(
        _config(tmp_path, problem, repetitions=2, budget=5),
        scheduler=scheduler,
        allow_imports=True,
    )
    assert not result.failed
    with Journal(tmp_path / "c.db") as journal:
        spans = sorted(
            (min(t.started_at for t in ts), max(t.started_at + t.duration_s for t in ts))
            for ts in (journal.trials(r.id) for r in journal.runs())
        )
    assert len(spans) == 4
    for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
        assert start >= end


KILLED = """
from gpautotune.comparison import run_comparison
if __name__ == "__main__":
    run_comparison({config!r}, workers=2, allow_imports=True)
"""


def _finished(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM runs WHERE status='finished'").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_killed_comparison_resumes_with_every_repetition_once(tmp_path):
    problem = f"{{name: '{HELPERS}:SlowBooth', delay_s: 0.02}}"
    cfg = _config(tmp_path, problem, repetitions=8, budget=12)
    script = tmp_path / "run.py"
    script.write_text(KILLED.format(config=str(cfg)))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True)
    db = tmp_path / "c.db"
    deadline = time.time() + 120
    while _finished(db) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the client, its cluster and its workers
    proc.wait()
    stopped_at = _finished(db)
    assert 3 <= stopped_at < 16
    subprocess.run([sys.executable, str(script)], env=env, check=True, timeout=300)
    _check_runs(db, 16, 12)
