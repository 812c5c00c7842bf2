"""Tuning runs on SPAPT kernels: best speedup over the baseline, with a 95% CI.

For each kernel and each of ``--runs`` seeds, ``--strategy`` (random sampling by default;
``gpr`` once that strategy exists) tunes the ``small`` preset with ``--budget``
measurements. Each run reports its best speedup (baseline mean time / best mean time)
and the iteration (1-based) where that best was first measured; the runs give a mean
best speedup with a Student-t 95% confidence interval.

Runs are stored in a SQLite journal and resume where they stopped, so the script can be
run in slices (``--max-minutes``) on a shared machine::

    PYTHONPATH=$PWD python benchmarks/spapt_tuning.py --strategy random --kernels bicg dgemv3 \\
        --budget 100 --runs 5 --max-minutes 9
    PYTHONPATH=$PWD python benchmarks/spapt_tuning.py --strategy gpr ...   # later

Outputs: ``<out>/tuning_<strategy>_runs.csv`` (one row per run) and
``<out>/tuning_<strategy>_summary.csv``; the journal defaults to
``results/spapt/tuning.db`` (not committed: failed trials keep their C source).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import time
from pathlib import Path

import pandas as pd
from scipy import stats

from gpautotune.problems import Status
from gpautotune.problems.spapt import SpaptProblem
from gpautotune.tuner import tune


class _Deadline(Exception):
    """Raised from the tuning callback when the time slice is over (the run resumes later)."""


def _parse_options(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run_kernel(kernel: str, args: argparse.Namespace, deadline: float) -> list[dict]:
    """Every run of one kernel (resumed from the journal); one row per finished run."""
    problem = SpaptProblem(
        kernel,
        compile_timeout_s=args.compile_timeout,
        run_timeout_s=args.run_timeout,
        omp_threads=args.omp_threads,
        cache_dir=args.cache_dir,
    )
    base = problem.baseline_record()
    rows = []

    def stop(trial, run) -> None:
        speed = trial.measurement.metrics.get("speedup")
        logging.info(
            "%s seed %d #%d %s %s",
            kernel,
            run.strategy.seed,
            trial.number + 1,
            trial.status,
            f"{speed:.3f}" if speed else "",
        )
        if time.monotonic() > deadline:
            raise _Deadline

    try:
        for seed in range(args.seed, args.seed + args.runs):
            result = tune(
                problem,
                args.strategy,
                args.budget,
                storage=args.journal,
                seed=seed,
                strategy_options=_parse_options(args.strategy_option),
                callback=stop,
            )
            rows.append(_run_row(kernel, seed, base.mean_s, result.trials))
    finally:
        problem.close()
    return rows


def _run_row(kernel: str, seed: int, baseline_s: float, trials: list) -> dict:
    ok = [t for t in trials if t.ok]
    best = min(ok, key=lambda t: (t.value, t.number)) if ok else None
    counts = {s.value: sum(t.status is s for t in trials) for s in Status}
    return {
        "kernel": kernel,
        "seed": seed,
        "trials": len(trials),
        "baseline_s": baseline_s,
        "best_s": best.value if best else math.nan,
        "best_speedup": baseline_s / best.value if best else math.nan,
        "best_iteration": best.number + 1 if best else math.nan,
        "best_config": json.dumps(best.config, sort_keys=True) if best else "",
        **{f"n_{k}": v for k, v in counts.items()},
        "median_eval_s": statistics.median(t.duration_s for t in trials),
    }


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean best speedup with a Student-t 95% interval, and where the best was found."""
    rows = []
    for kernel, g in runs.groupby("kernel", sort=False):
        s = g.best_speedup.to_numpy(dtype=float)
        n = len(s)
        half = stats.t.ppf(0.975, n - 1) * s.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan
        rows.append(
            {
                "kernel": kernel,
                "runs": n,
                "budget": int(g.trials.max()),
                "baseline_s": float(g.baseline_s.iloc[0]),
                "best_speedup_mean": s.mean(),
                "ci95_low": s.mean() - half,
                "ci95_high": s.mean() + half,
                "best_speedup_min": s.min(),
                "best_speedup_max": s.max(),
                "best_iteration_median": float(g.best_iteration.median()),
                "best_iteration_mean": float(g.best_iteration.mean()),
                "failures_per_run": float(
                    g[[c for c in g.columns if c.startswith("n_") and c != "n_ok"]]
                    .sum(axis=1)
                    .mean()
                ),
                "median_eval_s": float(g.median_eval_s.median()),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", default="random")
    parser.add_argument("--strategy-option", action="append", default=[], metavar="KEY=JSON")
    parser.add_argument("--kernels", nargs="*", default=["bicg", "dgemv3"])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile-timeout", type=float, default=30.0)
    parser.add_argument("--run-timeout", type=float, default=60.0)
    parser.add_argument(
        "--omp-threads", type=int, default=None, help="OMP_NUM_THREADS (default: unset)"
    )
    parser.add_argument("--max-minutes", type=float, default=math.inf)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--journal", default="results/spapt/tuning.db")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/spapt"))
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for noisy in ("gpautotune", "gpautotune.problems.spapt._problem"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    Path(args.journal).parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + 60 * args.max_minutes
    rows = []
    try:
        for kernel in args.kernels:
            rows.extend(run_kernel(kernel, args, deadline))
    except _Deadline:
        print(
            f"time slice over after {len(rows)} finished runs; run the same command again to resume"
        )
        return
    runs = pd.DataFrame(rows)
    args.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(args.out / f"tuning_{args.strategy}_runs.csv", index=False)
    summary = summarise(runs)
    summary.to_csv(args.out / f"tuning_{args.strategy}_summary.csv", index=False)
    print(runs.drop(columns=["best_config"]).to_string(index=False))
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
