"""GPR on the Laplacian K40c replay: slowdown vs the optimum along the budget.

Run:
  .venv/bin/python benchmarks/gpr_laplacian.py --reps 100 --budget 120 --workers 2 \
      --out benchmarks/results/gpr/default.csv [--set trend=constant --set n_init=20 ...]

Each repetition is ``tune(laplacian_replay(), "gpr", budget, seed=s)``; the script
writes one row per (repetition, checkpoint) and prints a Markdown table of the mean,
median and worst slowdown at each checkpoint, the share of runs at the optimum, and the
median ask() time.
"""

from __future__ import annotations

import argparse
import ast
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

CHECKPOINTS = (30, 55, 60, 90, 120)


def _parse(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, raw = item.partition("=")
        try:
            out[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out[key] = raw
    return out


def one_run(args: tuple[int, int, dict, int]) -> list[dict]:
    seed, budget, options, batch = args
    from gpautotune.problems import laplacian_replay
    from gpautotune.tuner import tune

    problem = laplacian_replay()
    t0 = time.perf_counter()
    result = tune(problem, "gpr", budget, seed=seed, strategy_options=options, batch_size=batch)
    wall = time.perf_counter() - t0
    values = np.array([t.value if t.ok else np.inf for t in result.trials])
    best = np.minimum.accumulate(values) / problem.optimum
    asks = [t.info["fit_s"] + t.info["acq_s"] for t in result.trials if "fit_s" in t.info]
    found = int(np.argmin(values)) + 1
    return [
        {
            "seed": seed,
            "checkpoint": c,
            "slowdown": float(best[min(c, len(best)) - 1]),
            "found_at": found,
            "median_ask_s": float(np.median(asks)) if asks else 0.0,
            "wall_s": wall,
        }
        for c in CHECKPOINTS
        if c <= budget
    ]


def summarise(frame: pd.DataFrame) -> str:
    lines = [
        "| evaluations | mean | median | worst | at optimum | runs |",
        "|---|---|---|---|---|---|",
    ]
    for c, g in frame.groupby("checkpoint"):
        s = g["slowdown"]
        at_best = (s <= 1 + 1e-9).mean()
        lines.append(
            f"| {c} | {s.mean():.4f} | {s.median():.4f} | {s.max():.4f} "
            f"| {at_best:.0%} | {len(g)} |"
        )
    runs = frame.drop_duplicates("seed")
    lines.append("")
    lines.append(
        f"median ask() {runs['median_ask_s'].median():.3f} s; mean iteration of the best point "
        f"{runs['found_at'].mean():.1f}; wall per run {runs['wall_s'].mean():.1f} s"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--set", action="append", default=[], help="strategy option key=value")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    options = _parse(args.set)
    jobs = [
        (s, args.budget, options, args.batch)
        for s in range(args.first_seed, args.first_seed + args.reps)
    ]
    rows: list[dict] = []
    from rich.progress import Progress

    with ProcessPoolExecutor(args.workers) as pool, Progress() as progress:
        task = progress.add_task(f"gpr {options}", total=len(jobs))
        for result in pool.map(one_run, jobs):
            rows.extend(result)
            progress.advance(task)
    frame = pd.DataFrame(rows)
    for k, v in options.items():
        frame[k] = str(v)
    frame["batch"] = args.batch
    args.out.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out, index=False)
    print(f"options {options} batch {args.batch}")
    print(summarise(frame))


if __name__ == "__main__":
    main()
