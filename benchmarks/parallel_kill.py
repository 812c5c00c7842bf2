"""Kill an asynchronous tuning run at random moments: nothing lost, nothing measured twice.

Usage::

    python benchmarks/parallel_kill.py --kills 20 --workers 4 --budget 200 --seed 0

Runs ``gpautotune tune`` (GPR on the paced K40c replay, ``--workers N``) as a separate
process, and ``--kills`` times: waits until it evaluates, then, at a random moment,
``kill -9``s one of its Dask worker processes (mid-evaluation: the paced evaluations
sleep) and, at a later random moment, the tuner itself; records which configurations
the journal had as running at that instant, checks that the tuner's worker processes
end by themselves, and starts the command again (a resume). Then it lets the run finish
and counts from the journal: trials lost (a configuration in flight at a kill that was
never committed, or fewer trials than the budget), trials repeated (a configuration
committed twice), records still running, worker processes that outlived the tuner.
Writes ``benchmarks/results/parallel/kill_<tag>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).parent / "results" / "parallel"
CONFIG = """
problem: {{name: paced, problem: {{name: laplacian-replay}}, optimum_s: 0.5, max_s: 5}}
strategy: {{name: {strategy}}}
budget: {budget}
seed: {seed}
storage: {db}
"""


def _query(db: Path, sql: str) -> list[tuple]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30) as conn:
            return conn.execute(sql).fetchall()
    except sqlite3.Error:
        return []


def _counts(db: Path) -> tuple[int, int]:
    trials = _query(db, "SELECT COUNT(*) FROM trials")
    running = _query(db, "SELECT COUNT(*) FROM running_trials")
    return (trials[0][0] if trials else 0), (running[0][0] if running else 0)


def _workers(proc: subprocess.Popen) -> list[psutil.Process]:
    """The Dask worker processes (multiprocessing spawns) under the tuner."""
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                out.append(child)
        except psutil.Error:
            continue
    return out


def _running_ids(db: Path) -> set[int]:
    return {r[0] for r in _query(db, "SELECT id FROM running_trials")}


def _wait_until_evaluating(proc: subprocess.Popen, db: Path, timeout: float = 300) -> bool:
    """Wait until this tuner process dispatched a new configuration or committed a trial
    (running records left by the previous kill do not count)."""
    start, (trials, _), before = time.time(), _counts(db), _running_ids(db)
    while time.time() - start < timeout and proc.poll() is None:
        if _counts(db)[0] > trials or _running_ids(db) - before:
            return True
        time.sleep(0.05)
    return False


def one_cycle(command: list[str], db: Path, rng: np.random.Generator, window: float) -> dict:
    """Start the tuner, kill a worker then the tuner at random moments; what happened."""
    proc = subprocess.Popen(command, cwd=ROOT, start_new_session=True, **_quiet())
    event: dict[str, Any] = {"finished": False}
    if not _wait_until_evaluating(proc, db):
        proc.wait()
        event["finished"] = proc.returncode == 0
        return event
    at_worker, at_tuner = sorted(rng.uniform(0, window, size=2))
    time.sleep(at_worker)
    workers = _workers(proc)
    if workers and proc.poll() is None:
        victim = workers[int(rng.integers(len(workers)))]
        event["worker_killed_while_running"] = _counts(db)[1]
        victim.kill()
    time.sleep(at_tuner - at_worker)
    family = _workers(proc)
    if proc.poll() is not None:
        event["finished"] = proc.returncode == 0
        return event
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    event["in_flight"] = [r[0] for r in _query(db, "SELECT config FROM running_trials")]
    event["trials_at_kill"] = _counts(db)[0]
    _, alive = psutil.wait_procs(family, timeout=60)
    event["orphans"] = len(alive)
    for p in alive:
        p.kill()
    return event


def _quiet() -> dict:
    return {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}


def check(db: Path, budget: int, events: list[dict]) -> dict:
    configs = [json.loads(r[0]) for r in _query(db, "SELECT config FROM trials ORDER BY number")]
    keys = [json.dumps(c, sort_keys=True) for c in configs]
    in_flight = {
        json.dumps(json.loads(c), sort_keys=True) for e in events for c in e.get("in_flight", [])
    }
    return {
        "trials": len(keys),
        "budget": budget,
        "repeated": len(keys) - len(set(keys)),
        "lost": len(in_flight - set(keys)) + max(budget - len(keys), 0),
        "in_flight_at_kills": len(in_flight),
        "still_running": _counts(db)[1],
        "tuner_kills": sum("in_flight" in e for e in events),
        "worker_kills": sum("worker_killed_while_running" in e for e in events),
        "worker_kills_mid_evaluation": sum(
            e.get("worker_killed_while_running", 0) > 0 for e in events
        ),
        "orphans": sum(e.get("orphans", 0) for e in events),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--strategy", default="gpr")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=float, default=4.0, help="seconds: kill moments")
    parser.add_argument("--tag", default="run")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="gpautotune-kill-"))
    db, config = folder / "kill.db", folder / "kill.yaml"
    config.write_text(
        CONFIG.format(strategy=args.strategy, budget=args.budget, seed=args.seed, db=db)
    )
    command = [
        sys.executable,
        "-m",
        "gpautotune",
        "tune",
        str(config),
        "--workers",
        str(args.workers),
    ]
    rng = np.random.default_rng(args.seed)
    events: list[dict] = []
    start = time.time()
    while sum("in_flight" in e for e in events) < args.kills:
        events.append(one_cycle(command, db, rng, args.window))
        print({k: v for k, v in events[-1].items() if k != "in_flight"}, flush=True)
        if events[-1]["finished"]:
            break
    if not events[-1]["finished"]:
        subprocess.run(command, cwd=ROOT, check=True, **_quiet())
    summary = {**check(db, args.budget, events), "wall_s": round(time.time() - start, 1)}
    summary["command"] = " ".join(command)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"kill_{args.tag}.json").write_text(
        json.dumps({"summary": summary, "events": events}, indent=1)
    )
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
