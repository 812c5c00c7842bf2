"""Asynchronous parallel tuning: wall-clock speed-up on Dask, sample efficiency, and the
simulated-time driver checked against real workers.

Usage::

    # wall-clock speed-up, real Dask workers sleeping for the paced replay's times
    python benchmarks/parallel.py speedup --strategy gpr --workers 1 2 4 8 --seed 0
    # mean best at 60 and 120 evaluations, N simulated workers vs sequential, 20 seeds
    python benchmarks/parallel.py efficiency --workers 1 4 --seeds 20 --jobs 16
    # the simulated-time driver against real workers (a repeated seed: real vs real)
    python benchmarks/parallel.py match --workers 4 --seed 0 0 1 1

Problems (``--problems``): ``k40c`` (the Laplacian K40c table), ``gemm`` and
``convolution`` (Kernel Tuner caches of the RTX 3090), each paced
(:mod:`gpautotune.problems.paced`): an evaluation sleeps ``0.5 s x value / optimum``,
at most 5 s (a failed one 0.5 s). Outputs go to ``benchmarks/results/parallel/``.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OUT = Path(__file__).parent / "results" / "parallel"
PROBLEMS = {
    "k40c": {"name": "laplacian-replay"},
    "gemm": {"name": "kt-cache", "path": "kt-caches/gemm/RTX_3090.json.gz"},
    "convolution": {"name": "kt-cache", "path": "kt-caches/convolution/RTX_3090.json.gz"},
}
PACE = {"optimum_s": 0.5, "max_s": 5.0}
CHECKPOINTS = (60, 120)


def paced(name: str) -> Any:
    from gpautotune.problems.paced import paced_problem

    return paced_problem(PROBLEMS[name], **PACE)


def best_along(trials: list[Any], optimum: float) -> np.ndarray:
    """Slowdown of the best so far after each trial (inf before the first success)."""
    values = np.array([t.value if t.ok else np.inf for t in trials])
    return np.minimum.accumulate(values) / optimum


def _timed_asks() -> list[float]:
    """Record the wall time of every TuningRun.ask in this process (the tuner's own time)."""
    from gpautotune.tuner import TuningRun

    spent: list[float] = []
    ask = TuningRun.ask

    def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return ask(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)

    TuningRun.ask = timed  # type: ignore[method-assign]
    return spent


# ------------------------------------------------------------------- speed-up
def real_runs(args: argparse.Namespace, strategy: str) -> Iterator[tuple[Any, ...]]:
    """Tune each problem, worker count and seed on a local Dask cluster; yields
    ``(name, problem, workers, seed, result, wall_s, mean_ask_s, ask_s)``."""
    from gpautotune.parallel import dask_client
    from gpautotune.tuner import tune

    asks = _timed_asks()
    for name in args.problems:
        problem = paced(name)
        for n in args.workers:
            with dask_client(workers=n) as client:
                for seed in args.seed:
                    del asks[:]
                    start = time.perf_counter()
                    result = tune(problem, strategy, args.budget, seed=seed, client=client)
                    wall = time.perf_counter() - start
                    yield name, problem, n, seed, result, wall, float(np.mean(asks)), sum(asks)


def speedup(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    for name, problem, n, seed, result, wall, _, ask_s in real_runs(args, args.strategy):
        sleep = sum(problem.seconds(t.measurement) for t in result.trials)
        rows.append(
            {
                "problem": name,
                "strategy": args.strategy,
                "seed": seed,
                "workers": n,
                "wall_s": round(wall, 2),
                "evaluations": result.used,
                "per_minute": round(60 * result.used / wall, 1),
                "evaluation_s": round(sleep, 1),
                "ask_s": round(ask_s, 1),
                "best": round(best_along(result.trials, problem.optimum)[-1], 4),
            }
        )
        print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    base = frame[frame.workers == 1].set_index(["problem", "seed"])["wall_s"]
    frame["speedup"] = [
        round(base.get((p, s), np.nan) / w, 2)
        for p, s, w in zip(frame.problem, frame.seed, frame.wall_s, strict=True)
    ]
    frame["efficiency"] = (frame.speedup / frame.workers).round(2)
    return frame


# ----------------------------------------------------------------- efficiency
def simulated(
    name: str, workers: int, seed: int, budget: int, ask_s: float = 0.0
) -> dict[str, Any]:
    """One GPR run on ``workers`` simulated workers (1: the sequential run), each ask
    taking ``ask_s`` simulated seconds."""
    import torch

    from gpautotune.parallel import SimulatedWorkers, run_parallel
    from gpautotune.tuner import TuningRun

    torch.set_num_threads(1)
    problem = paced(name)
    run = TuningRun(problem, "gpr", seed=seed, budget=budget)
    pool = SimulatedWorkers(problem.problem, workers, problem.seconds, ask_s=ask_s)
    start = time.perf_counter()
    run_parallel(run, pool)
    best = best_along(run.trials, problem.optimum)
    return {
        "problem": name,
        "workers": workers,
        "seed": seed,
        "ask_s": ask_s,
        **{f"best_{c}": float(best[c - 1]) for c in CHECKPOINTS if c <= len(best)},
        "simulated_s": round(pool.clock, 1),
        "cpu_s": round(time.perf_counter() - start, 1),
        "configs": [sorted(t.config.items()) for t in run.trials],
    }


def _simulated_star(job: tuple[str, int, int, int, float]) -> dict[str, Any]:
    return simulated(*job)


def efficiency(args: argparse.Namespace) -> pd.DataFrame:
    jobs = [
        (name, n, seed, args.budget, args.ask_s)
        for name in args.problems
        for seed in range(args.first_seed, args.first_seed + args.seeds)
        for n in args.workers
    ]
    from dask.distributed import as_completed

    from gpautotune.parallel import dask_client

    # Each run's row is appended as it finishes, and runs already in the file are not
    # made again: a command cut short (a time limit) keeps what it measured and resumes.
    path = OUT / f"efficiency_runs_{args.tag}.csv"
    done = pd.read_csv(path) if path.exists() else pd.DataFrame()
    if len(done):
        made = set(zip(done.problem, done.workers, done.seed, strict=True))
        jobs = [job for job in jobs if (job[0], job[1], job[2]) not in made]
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # inherited by the local Dask workers
    with dask_client(None, args.jobs) as client:
        for future in as_completed(client.map(_simulated_star, jobs, pure=False)):
            row = pd.DataFrame([future.result()]).drop(columns="configs")
            row.to_csv(path, mode="a", header=not path.exists(), index=False)
            print(row.iloc[0].to_dict(), flush=True)
    return summarise_efficiency(pd.read_csv(path))


def summarise_efficiency(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean (and worst) best at each checkpoint per problem and number of workers, with
    the mean at 120 relative to the sequential run's (workers = 1)."""
    cols = [f"best_{c}" for c in CHECKPOINTS]
    table = frame.groupby(["problem", "workers"]).agg(
        runs=("seed", "size"),
        **{f"mean_{c}": (c, "mean") for c in cols},
        worst_120=("best_120", "max"),
        simulated_s=("simulated_s", "mean"),
    )
    # Without sequential runs in the frame (a part run alone) the two ratios are empty.
    sequential = table[table.index.get_level_values("workers") == 1].droplevel("workers")
    table["vs_sequential_120"] = [
        m / sequential["mean_best_120"].get(p, np.nan)
        for (p, _), m in zip(table.index, table["mean_best_120"], strict=True)
    ]
    table["simulated_speedup"] = [
        sequential["simulated_s"].get(p, np.nan) / t
        for (p, _), t in zip(table.index, table["simulated_s"], strict=True)
    ]
    return table.reset_index().round(4)


def summary(args: argparse.Namespace) -> pd.DataFrame:
    """The efficiency table of several parts' per-run rows joined (parts run as separate
    commands: different problems, or the parallel runs apart from the sequential ones),
    with each paired test against the sequential run of the same seed."""
    from scipy.stats import bootstrap, wilcoxon

    frame = pd.concat(
        [pd.read_csv(OUT / f"efficiency_runs_{tag}.csv") for tag in args.parts], ignore_index=True
    ).drop_duplicates(["problem", "workers", "seed"])
    table = summarise_efficiency(frame)
    best = frame.pivot_table(index=["problem", "seed"], columns="workers", values="best_120")
    worse, better, p_values, low, high = [], [], [], [], []
    for problem, n in zip(table.problem, table.workers, strict=True):
        runs = best.loc[problem]
        diff = (runs[n] - runs[1]).dropna()
        worse.append(int((diff > 1e-9).sum()))
        better.append(int((diff < -1e-9).sum()))
        changed = bool((diff.abs() > 1e-9).any())
        p_values.append(round(wilcoxon(diff).pvalue, 3) if changed else np.nan)
        # the paired mean difference as a fraction of the sequential mean, 95% bootstrap
        ci = (
            bootstrap((diff.to_numpy(),), np.mean, random_state=0).confidence_interval
            if changed
            else (0.0, 0.0)
        )
        low.append(round(ci[0] / runs[1].mean(), 4))
        high.append(round(ci[1] / runs[1].mean(), 4))
    return table.assign(
        worse_120=worse, better_120=better, wilcoxon_p=p_values, diff_low=low, diff_high=high
    )


# ---------------------------------------------------------------------- match
def match(args: argparse.Namespace) -> pd.DataFrame:
    """Real Dask workers vs the simulated driver, same problem, seed and worker count; the
    simulation without ask time and with the real run's mean ask time."""
    rows, earlier = [], {}
    for name, problem, n, seed, real, wall, mean_ask, _ in real_runs(args, "gpr"):
        ask_s = round(mean_ask, 2)
        got = [sorted(t.config.items()) for t in real.trials]
        rows.append(_real_row(name, n, seed, wall, ask_s, real, problem.optimum))
        if (name, n, seed) in earlier:  # the same seed again: how much real runs differ
            rows[-1]["driver"] = "dask again"
            rows[-1].update(_overlap(got, earlier[name, n, seed]))
        else:
            earlier[name, n, seed] = got
            for modelled in (0.0, ask_s):
                rows.append(_compare(got, simulated(name, n, seed, args.budget, modelled)))
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def _overlap(a: list[Any], b: list[Any]) -> dict[str, int]:
    """Trials in the same order from the start, and configurations in common."""
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    return {"same_prefix": same, "common": len({str(c) for c in a} & {str(c) for c in b})}


def _real_row(name, n, seed, wall, ask_s, real, optimum) -> dict[str, Any]:
    best = best_along(real.trials, optimum)
    return {"problem": name, "workers": n, "seed": seed, "driver": "dask", "ask_s": ask_s,
            "wall_s": round(wall, 1), "best_60": round(best[59], 4), "best_120": round(best[-1], 4),
            "same_prefix": len(real.trials), "common": len(real.trials)}  # fmt: skip


def _compare(real: list[Any], sim: dict[str, Any]) -> dict[str, Any]:
    return {"problem": sim["problem"], "workers": sim["workers"], "seed": sim["seed"],
            "driver": "simulated", "ask_s": sim["ask_s"], "wall_s": sim["simulated_s"],
            "best_60": round(sim["best_60"], 4), "best_120": round(sim["best_120"], 4),
            **_overlap(real, sim["configs"])}  # fmt: skip


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown table of a frame."""
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * frame.shape[1]]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["speedup", "efficiency", "match", "summary"])
    parser.add_argument("--problems", nargs="+", default=["k40c"], choices=sorted(PROBLEMS))
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2, 4, 8])
    parser.add_argument("--strategy", default="gpr")
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--seed", nargs="+", type=int, default=[0], help="speedup, match")
    parser.add_argument("--seeds", type=int, default=20, help="efficiency: how many seeds")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="efficiency: processes")
    parser.add_argument("--ask-s", type=float, default=0.0, help="efficiency: seconds per ask")
    parser.add_argument("--tag", default="run", help="suffix of the output files")
    parser.add_argument(
        "--parts", nargs="+", default=[], help="summary: tags of efficiency runs to join"
    )
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    what = {"speedup": speedup, "efficiency": efficiency, "match": match, "summary": summary}
    frame = what[args.what](args)
    path = OUT / f"{args.what}_{args.tag}.csv"
    frame.to_csv(path, index=False)
    print(markdown(frame))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
