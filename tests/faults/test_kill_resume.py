"""Fault injection: ``kill -9`` of ``gpautotune tune`` at random moments, then resume.

GPR on the K40c replay (the issue's reproduction, where the resumed run once parted from
the uninterrupted one): killed three times at seeded random moments (a few trials after
each start, plus a random part of a trial's time), restarted each time; the journal must
end with the uninterrupted run's configurations, in order, each once.
benchmarks/faults.py does the same with 20 kills per strategy family.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.faults.processes import ROOT, descendants, env, gone, wait_for

CONFIG = (
    "problem: {name: laplacian-replay}\nstrategy: {name: gpr, n_init: 6}\nbudget: 16\nseed: 3\n"
)


def _configs(db) -> list[str]:
    try:
        with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
            return [r[0] for r in conn.execute("SELECT config FROM trials ORDER BY number")]
    except sqlite3.Error:
        return []


def _tune(config, db) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "gpautotune", "tune", str(config), "--db", str(db)]
    return subprocess.Popen(cmd, env=env(), cwd=ROOT, stdout=subprocess.DEVNULL)


@pytest.mark.slow
def test_gpr_killed_three_times_ends_as_the_uninterrupted_run(tmp_path) -> None:
    config = tmp_path / "gpr.yaml"
    config.write_text(CONFIG)
    whole, killed = tmp_path / "whole.db", tmp_path / "killed.db"
    start = time.perf_counter()
    assert _tune(config, whole).wait(300) == 0
    per_trial = (time.perf_counter() - start) / 16
    rng = random.Random(19)
    for _ in range(3):
        proc = _tune(config, killed)
        target = len(_configs(killed)) + rng.randint(1, 3)
        wait_for(
            lambda t=target, p=proc: len(_configs(killed)) >= t or p.poll() is not None,
            300,
            "trials",
        )
        time.sleep(rng.uniform(0, per_trial))
        family = [p.pid for p in descendants(proc.pid)]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        wait_for(lambda f=family: all(gone(pid) for pid in f), 10, "the tuner's processes")
    assert 3 <= len(_configs(killed)) < 16
    assert _tune(config, killed).wait(300) == 0
    assert _configs(killed) == _configs(whole) and len(set(_configs(killed))) == 16
