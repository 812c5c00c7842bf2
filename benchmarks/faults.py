"""kill -9 of ``gpautotune tune`` at random moments: the resumed run must end with the
uninterrupted run's trial sequence, and no process of the killed tuner may outlive it.

For each strategy family the script tunes once without interruption, then runs the same
command into a fresh journal and kills it with SIGKILL, restarting it (which resumes the
run) after each kill, until it finishes; when a run finishes before ``--kills`` kills
were made, the next seed gets the kills left. A kill moment is random: the
tuner is killed once a random number (1 to ``--spread``) of new trials is stored, after
a further random delay of up to one mean trial time, so kills land while a strategy
fits its model, while an evaluation runs, between two stores and during start-up. After
each kill, every process the tuner had started must be gone (checked by pid).

Families (``--families``):

* ``gpr``: GPR on the K40c Laplacian replay (the issue's reproduction);
* ``gpr-batch``: the same in batches of 3 (a kill in the middle of a batch);
* ``genetic``: a baseline (a genetic algorithm) on the same replay;
* ``quantization``: GPR over the 16 bit widths of the digits network, in batches of 2
  (a non-enumerable space: the candidate pool's backlog must be rebuilt on resume; an
  evaluation takes about a second, so kills also fall in the middle of a batch, which
  the replay's instant evaluations rarely allow).

Usage (from the repository root)::

    PYTHONPATH=$PWD nice python benchmarks/faults.py --kills 20

writes ``benchmarks/results/faults/<family>.json`` and ``faults.md``, the table of every
family measured so far (docs/faults.md quotes it); exits 1 when a sequence differs or a
process was left.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "faults"
FAMILIES = {
    "gpr": ("problem: {name: laplacian-replay}\nstrategy: {name: gpr}\n", 40, 1),
    "gpr-batch": ("problem: {name: laplacian-replay}\nstrategy: {name: gpr}\n", 40, 3),
    "genetic": ("problem: {name: laplacian-replay}\nstrategy: {name: genetic}\n", 120, 1),
    "quantization": (
        "problem: {name: quantization-digits, size_limit: 0.07, seed: 0}\n"
        "strategy: {name: gpr, n_init: 8}\n",
        30,
        2,
    ),
}


@dataclass
class Outcome:
    """What one family gave."""

    family: str
    budget: int
    batch_size: int
    seeds: int = 0
    kills: int = 0
    #: Per seed, the trials stored when each kill came.
    stored_at_kills: list[list[int]] = field(default_factory=list)
    starts: int = 0
    identical: bool = False
    trials: int = 0
    distinct: int = 0
    leftover_processes: list[int] = field(default_factory=list)
    wall_s: float = 0.0


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


def _configs(db: Path) -> list[str]:
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT config FROM trials ORDER BY number").fetchall()
    return [r[0] for r in rows]


def _tune(config: Path, db: Path) -> list[str]:
    return [sys.executable, "-m", "gpautotune", "tune", str(config), "--db", str(db)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _start(config: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen(
        _tune(config, db), env=_env(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _kill(proc: subprocess.Popen) -> list[int]:
    """SIGKILL the tuner; the pids of its processes still alive a few seconds later."""
    try:
        family = [p.pid for p in psutil.Process(proc.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    alive = family
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _running(pid)]
    return alive


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _round(config: Path, work: Path, kills: int, spread: int, rng: random.Random) -> dict:
    """One uninterrupted run and one killed up to ``kills`` times (fewer when it finishes
    first); their sequences, the kill moments and any process left."""
    whole = work / f"{config.stem}-{len(list(work.glob('*-whole.db')))}-whole.db"
    killed = whole.with_name(whole.name.replace("-whole", "-killed"))
    t0 = time.perf_counter()
    subprocess.run(_tune(config, whole), cwd=ROOT, env=_env(), check=True, capture_output=True)
    mean_trial = (time.perf_counter() - t0) / max(len(_configs(whole)), 1)
    moments, left, starts = [], [], 0
    while True:
        proc = _start(config, killed)
        starts += 1
        target = _stored(killed) + rng.randint(1, spread)
        while len(moments) < kills and _stored(killed) < target and proc.poll() is None:
            time.sleep(0.01)
        if len(moments) >= kills or proc.poll() is not None:  # finished before a kill
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise RuntimeError(f"resuming {config.stem} failed: {err.decode()[-2000:]}")
            break
        time.sleep(rng.uniform(0, mean_trial))
        moments.append(_stored(killed))
        left += _kill(proc)
    return {
        "same": _configs(whole) == _configs(killed),
        "trials": len(_configs(killed)),
        "distinct": len(set(_configs(killed))),
        "moments": moments,
        "left": left,
        "starts": starts,
    }


def run_family(name: str, kills: int, spread: int, rng: random.Random, work: Path) -> Outcome:
    """Rounds of :func:`_round` (seeds 1, 2, ...) until ``kills`` kills were made."""
    text, budget, batch = FAMILIES[name]
    outcome = Outcome(name, budget, batch)
    start = time.perf_counter()
    identical = []
    while outcome.kills < kills:
        seed = len(identical) + 1
        config = work / f"{name}-seed{seed}.yaml"
        config.write_text(f"{text}budget: {budget}\nseed: {seed}\nbatch_size: {batch}\n")
        result = _round(config, work, kills - outcome.kills, spread, rng)
        identical.append(result["same"])
        outcome.kills += len(result["moments"])
        outcome.stored_at_kills.append(result["moments"])
        outcome.leftover_processes += result["left"]
        outcome.starts += result["starts"]
        outcome.trials += result["trials"]
        outcome.distinct += result["distinct"]
    outcome.identical = all(identical)
    outcome.seeds = len(identical)
    outcome.wall_s = round(time.perf_counter() - start, 1)
    return outcome


def _markdown(outcomes: list[Outcome]) -> str:
    lines = [
        "| family | budget | batch | seeds | kills | trials stored at the kills (per seed) |"
        " starts | trials | distinct | same sequences | processes left | wall (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        moments = "; ".join(", ".join(map(str, m)) for m in o.stored_at_kills)
        lines.append(
            f"| {o.family} | {o.budget} | {o.batch_size} | {o.seeds} | {o.kills} | {moments} | "
            f"{o.starts} | {o.trials} | {o.distinct} | {'yes' if o.identical else 'NO'} | "
            f"{len(o.leftover_processes)} | {o.wall_s} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--kills", type=int, default=20, help="kills per family")
    parser.add_argument("--spread", type=int, default=2, help="new trials before a kill, 1..N")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="gpautotune-faults-") as work:
        for name in args.families:
            outcome = run_family(name, args.kills, args.spread, rng, Path(work))
            print(json.dumps(asdict(outcome)), flush=True)
            (args.out / f"{name}.json").write_text(json.dumps(asdict(outcome), indent=1))
            outcomes.append(outcome)
    measured = [args.out / f"{name}.json" for name in FAMILIES]
    table = _markdown([Outcome(**json.loads(p.read_text())) for p in measured if p.is_file()])
    (args.out / "faults.md").write_text(table)
    print(table)
    if not all(o.identical and not o.leftover_processes for o in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    main()
