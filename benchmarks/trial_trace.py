"""Every trial of one GPR run on a Kernel Tuner cache, made afresh: its configuration,
value and the info the strategy recorded (timings left out), one line each, so that two
versions of the code can be shown to make the same run (a refactor's check):

    git worktree add /tmp/base HEAD~1
    GPAUTOTUNE_DATA=../shared/data PYTHONPATH=/tmp/base python benchmarks/trial_trace.py \\
        gemm/RTX_3060_laptop 3 --option escape=far > base.txt
    GPAUTOTUNE_DATA=../shared/data python benchmarks/trial_trace.py \\
        gemm/RTX_3060_laptop 3 --option escape=far > new.txt
    cmp base.txt new.txt

The info holds the fitted hyperparameters as exact floats, each pick's source and score,
the escapes and the lineages: the same lines mean the same fits and the same picks.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from gpautotune.config import apply_overrides
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.tuner import tune


def untimed(info: Any) -> Any:
    """``info`` without its timings (keys ending in ``_s``), at every depth."""
    if isinstance(info, dict):
        return {k: untimed(v) for k, v in info.items() if not k.endswith("_s")}
    return info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem", help="a cache of kt-caches/, e.g. gemm/RTX_3090")
    parser.add_argument("seed", type=int)
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument(
        "--option", action="append", default=[], help="a GPR option as KEY=VALUE (repeatable)"
    )
    args = parser.parse_args(argv)
    options = apply_overrides({}, args.option)  # YAML scalars; ConfigError names a bad one
    problem = kt_cache_problem(f"kt-caches/{args.problem}.json.gz")
    result = tune(problem, "gpr", args.budget, seed=args.seed, strategy_options=options)
    for trial in result.trials:
        value = trial.value if trial.ok else None
        info = json.dumps(untimed(trial.info), sort_keys=True, default=str)
        print(json.dumps(trial.config, sort_keys=True), value, info)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
