"""Benchmark 3: tune the Laplacian kernel on this machine's OpenCL device with a strategy.

Reports, per seed, the best time per pixel, the speedup over the naive kernel and the
fraction of the copy-bandwidth bound (all re-measured together after the run).

    PYTHONPATH=. python benchmarks/laplacian_tune.py --strategy random --budget 60 --seeds 0 1 2
    PYTHONPATH=. python benchmarks/laplacian_tune.py --strategy gpr --budget 60 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from laplacian_common import device_arguments, environment, problem_from, tuning_run, write_json


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    device_arguments(parser)
    parser.add_argument(
        "--strategy", default="random", help="a registered strategy name (random, sobol, gpr, ...)"
    )
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/laplacian"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    problem = problem_from(args)
    runs = [tuning_run(problem, args.strategy, args.budget, seed, args.out) for seed in args.seeds]
    write_json(
        args.out / f"tune_{args.strategy}.json", {"runs": runs, "environment": environment(problem)}
    )
    for r in runs:
        print(r["seed"], r.get("remeasured", {}).get("best"), r.get("speedup_over_naive"))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
