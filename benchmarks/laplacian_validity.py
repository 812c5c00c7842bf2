"""Benchmark 1: random valid configurations each match the reference or fail with a status.

PYTHONPATH=. python benchmarks/laplacian_validity.py --n 200 --seed 0 \
    --out benchmarks/results/laplacian
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import pandas as pd
from laplacian_common import device_arguments, environment, problem_from, row, write_json

from gpautotune.execution import IsolatedEvaluator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    device_arguments(parser)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/laplacian"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    problem = problem_from(args)
    configs = problem.space.sample(args.n, method="random", seed=args.seed)
    evaluator = IsolatedEvaluator(timeout_s=problem.timeout_s)
    rows, t0 = [], time.perf_counter()
    try:
        for config in configs:
            ev = evaluator(problem, config)
            rows.append(row(config, ev.measurement, duration_s=ev.duration_s))
    finally:
        evaluator.close()
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "validity.csv", index=False)
    counts = table["status"].value_counts().to_dict()
    summary = {
        "n": len(table),
        "seed": args.seed,
        "status_counts": counts,
        "wall_s": time.perf_counter() - t0,
        "workers_started": evaluator.workers_started,
        "environment": environment(problem),
        "ok_value_s_per_pixel": table.loc[table.status == "ok", "value"].describe().to_dict(),
    }
    write_json(args.out / "validity.json", summary)
    print(counts)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
