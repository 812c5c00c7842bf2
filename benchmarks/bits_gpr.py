"""GPR on the non-enumerable 54-factor size-constrained problem (issues 3 and 7).

Run:
  .venv/bin/python benchmarks/bits_gpr.py --seeds 10 --budget 245 --n-init 64 --workers 2 \
      --out benchmarks/results/gpr/bits_b245.csv

Methods (``STRATEGIES`` below): ``gpr`` (defaults, ``n_init`` initial points),
``gpr-screen`` ("screen, then tune", ``screen=0.02``), ``gpr-stall`` / ``gpr-poll`` /
``gpr-rotate`` / ``gpr-none`` (the stall escapes pinned: global LCB, poll, rotating poll,
none), ``random`` and ``sobol`` (constrained samplers), all with the same budget and
seeds. Per run: the best value, the initial design's best, where the model's picks came
from (sample / neighbours / backlog) and the mean pool composition.
Prints the mean best with a 95% t-interval per method, Mann-Whitney p-values of GPR
against random and Sobol, and the pool counts.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

os.environ.setdefault("OMP_NUM_THREADS", "1")

#: method -> (strategy, options); GPR methods also get ``n_init``. ``gpr`` is the default
#: strategy of the day; the others pin what they compare.
STRATEGIES = {
    "gpr": ("gpr", {}),
    "gpr-screen": ("gpr", {"screen": 0.02}),
    "gpr-stall": ("gpr", {"stall": 10, "stall_kappa": 10.0, "escape": "lcb"}),
    "gpr-poll": ("gpr", {"stall": 7, "stall_kappa": 10.0, "escape": "poll"}),
    "gpr-rotate": ("gpr", {"stall": 7, "stall_kappa": 10.0, "escape": "rotate"}),
    "gpr-none": ("gpr", {"stall": None}),
    "random": ("random", {}),
    "sobol": ("sobol", {}),
}
METHODS = tuple(STRATEGIES)


def one_run(job: tuple[str, int, int, int]) -> dict:
    from gpautotune.problems import ConstrainedBitsProblem
    from gpautotune.tuner import tune

    method, seed, budget, n_init = job
    problem = ConstrainedBitsProblem()
    name, options = STRATEGIES[method]
    if name == "gpr":
        options = {"n_init": n_init, **options}
    t0 = time.perf_counter()
    result = tune(problem, name, budget, seed=seed, strategy_options=options)
    values = np.array([t.value if t.ok else np.inf for t in result.trials])
    model = [t.info for t in result.trials if t.source == "model"]
    picked = Counter(str(i.get("picked_from")) for i in model)
    pools = pd.DataFrame([i.get("pool", {}) for i in model]).fillna(0)
    asks = [i["fit_s"] + i["acq_s"] for i in model]
    return {
        "method": method,
        "seed": seed,
        "budget": budget,
        "best": float(values.min()),
        "optimum": problem.optimum,
        "best_at_init": float(values[:n_init].min()),
        "found_at": int(np.argmin(values)) + 1,
        "picked": json.dumps(dict(picked)),
        "pool_mean": json.dumps({k: round(float(v), 1) for k, v in pools.mean().items()}),
        "fixed": len(next((t.info["screened"] for t in result.trials if "screened" in t.info), {})),
        "median_ask_s": float(np.median(asks)) if asks else 0.0,
        "wall_s": time.perf_counter() - t0,
    }


def report(frame: pd.DataFrame) -> str:
    lines = [
        "| method | runs | mean best | 95% CI | min | max "
        "| mean iteration of best | median ask s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, g in frame.groupby("method", sort=False):
        b = g["best"]
        half = (
            stats.t.ppf(0.975, len(b) - 1) * b.std(ddof=1) / np.sqrt(len(b))
            if len(b) > 1
            else float("nan")
        )
        lines.append(
            f"| {method} | {len(b)} | {b.mean():.3f} | ±{half:.3f} "
            f"| {b.min():.3f} | {b.max():.3f} | "
            f"{g['found_at'].mean():.0f} | {g['median_ask_s'].median():.2f} |"
        )
    lines.append(f"\noptimum {frame['optimum'].iloc[0]:.3f}")
    gpr = frame.loc[frame["method"] == "gpr", "best"]
    for other in ("random", "sobol", *(m for m in METHODS if m.startswith("gpr-"))):
        o = frame.loc[frame["method"] == other, "best"]
        if len(gpr) and len(o):
            p = stats.mannwhitneyu(gpr, o, alternative="two-sided").pvalue
            lines.append(
                f"gpr vs {other}: difference of means {gpr.mean() - o.mean():+.3f}, "
                f"Mann-Whitney p = {p:.3g}"
            )
    for method, g in frame[frame["method"].str.startswith("gpr")].groupby("method"):
        picked = sum((Counter(json.loads(s)) for s in g["picked"]), Counter())
        pool = pd.DataFrame([json.loads(s) for s in g["pool_mean"]]).mean().round(0).to_dict()
        lines.append(f"{method}: picks by source {dict(picked)}; mean pool per step {pool}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=245)
    parser.add_argument("--n-init", type=int, default=64)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    jobs = [
        (m, s, args.budget, args.n_init)
        for m in args.methods
        for s in range(args.first_seed, args.first_seed + args.seeds)
    ]
    jobs.sort(key=lambda j: not j[0].startswith("gpr"))  # the long runs first
    rows: list[dict] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from rich.progress import Progress

    with ProcessPoolExecutor(args.workers) as pool, Progress() as progress:
        task = progress.add_task("54-factor runs", total=len(jobs))
        for future in as_completed([pool.submit(one_run, j) for j in jobs]):
            rows.append(future.result())
            pd.DataFrame(rows).to_csv(args.out, index=False)
            progress.advance(task)
    frame = pd.DataFrame(rows)
    frame["method"] = pd.Categorical(frame["method"], [m for m in METHODS if m in args.methods])
    frame = frame.sort_values(["method", "seed"])
    frame["method"] = frame["method"].astype(str)
    frame.to_csv(args.out, index=False)
    print(report(frame))


if __name__ == "__main__":
    main()
