"""GPR ablation on the Laplacian K40c replay: named variants x seeds, one process pool.

Run:
  .venv/bin/python benchmarks/gpr_ablation.py --variants benchmarks/gpr_variants.json \
      --reps 16 --budget 120 --workers 2 --out benchmarks/results/gpr/ablation.csv

``--variants`` is a JSON object ``{"name": {strategy options}, ...}`` (``--only`` picks a
subset by name). Every (variant, seed) is one ``tune(laplacian_replay(), "gpr", ...)``
run, as in ``gpr_laplacian.py``; all of them share one pool of workers so that a machine
with many cores stays busy. Prints, per variant, the mean / median / worst slowdown and
the share of runs at the optimum at each checkpoint.
"""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import pandas as pd

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core per run; torch is set to 1 by GPSettings

from gpr_laplacian import CHECKPOINTS, one_run  # noqa: E402


def table(frame: pd.DataFrame, checkpoints: tuple[int, ...] = (60, 120)) -> str:
    head = "| variant | runs | " + " | ".join(
        f"mean@{c} | median@{c} | worst@{c} | opt@{c}" for c in checkpoints
    )
    lines = [head, "|" + "---|" * (2 + 4 * len(checkpoints))]
    for name, g in frame.groupby("variant", sort=False):
        cells = [name, str(g["seed"].nunique())]
        for c in checkpoints:
            s = g.loc[g["checkpoint"] == c, "slowdown"]
            cells += (
                [
                    f"{s.mean():.4f}",
                    f"{s.median():.4f}",
                    f"{s.max():.4f}",
                    f"{(s <= 1 + 1e-9).mean():.0%}",
                ]
                if len(s)
                else ["-"] * 4
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variants", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--reps", type=int, default=16)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="*",
        default=None,
        help="these seeds instead of --reps/--first-seed",
    )
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    variants = json.loads(args.variants.read_text())
    if args.only:
        missing = [n for n in args.only if n not in variants]
        if missing:
            raise SystemExit(f"--only names unknown variants {missing}; known: {sorted(variants)}")
        variants = {n: variants[n] for n in args.only}
    seeds = args.seeds if args.seeds else list(range(args.first_seed, args.first_seed + args.reps))
    jobs = {
        (name, seed): (seed, args.budget, opts, args.batch)
        for name, opts in variants.items()
        for seed in seeds
    }
    rows: list[dict] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    from rich.progress import Progress

    with ProcessPoolExecutor(args.workers) as pool, Progress() as progress:
        task = progress.add_task(f"{len(variants)} variants x {len(seeds)} seeds", total=len(jobs))
        futures = {pool.submit(one_run, job): key for key, job in jobs.items()}
        for future in as_completed(futures):
            name, _ = futures[future]
            rows.extend(
                {**r, "variant": name, "options": json.dumps(variants[name]), "batch": args.batch}
                for r in future.result()
            )
            pd.DataFrame(rows).to_csv(args.out, index=False)  # partial results survive a kill
            progress.advance(task)
    frame = pd.DataFrame(rows)
    if frame.empty:
        raise SystemExit(f"no checkpoint of {CHECKPOINTS} is within --budget {args.budget}")
    order = {n: i for i, n in enumerate(variants)}
    frame = frame.sort_values(
        ["variant", "seed", "checkpoint"], key=lambda c: c.map(order) if c.name == "variant" else c
    )
    frame.to_csv(args.out, index=False)
    print(
        table(
            frame,
            tuple(c for c in (30, 55, 60, 90, 120) if c <= args.budget and c in (60, args.budget)),
        )
    )


if __name__ == "__main__":
    main()
