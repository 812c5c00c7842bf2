"""The trial sequences of a strategy on a replayed table, as JSON (to compare two versions).

Run (from the repository root) on each version, then compare the files::

    PYTHONPATH=$PWD python benchmarks/gpr_sequence.py --seeds 0 1 2 3 --budget 60 --out after.json
    cmp before.json after.json

``--option KEY=VALUE`` (repeatable) passes a strategy option, e.g. ``gradient=closed_form``.

``--problem`` picks the table: ``laplacian`` (the K40c replay, the default), ``bits`` (the
54-factor constrained-bits problem) or a Kernel Tuner cache's path (under
``GPAUTOTUNE_DATA`` when relative, e.g. ``kt-caches/gemm/RTX_3090.json.gz``).
"""

from __future__ import annotations

import argparse
import json

from gpautotune.config import apply_overrides
from gpautotune.problems import ConstrainedBitsProblem, laplacian_replay
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.tuner import tune


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problem", default="laplacian", help="laplacian, bits or a cache path")
    parser.add_argument("--strategy", default="gpr")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--option", action="append", default=[], help="a strategy option as KEY=VALUE"
    )
    args = parser.parse_args()
    options = apply_overrides({}, args.option)  # YAML scalars; ConfigError names a bad one
    runs = {}
    for seed in args.seeds:
        problem = (
            laplacian_replay()
            if args.problem == "laplacian"
            else ConstrainedBitsProblem()
            if args.problem == "bits"
            else kt_cache_problem(args.problem)
        )
        result = tune(problem, args.strategy, args.budget, seed=seed, strategy_options=options)
        runs[seed] = [[t.config, t.value] for t in result.trials]
    with open(args.out, "w") as f:
        json.dump(runs, f, sort_keys=True)


if __name__ == "__main__":
    main()
