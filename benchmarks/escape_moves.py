"""One GPR run on a Kernel Tuner cache, made afresh, traced: each new best (evaluation,
slowdown, configuration) and each escape's move from the best configuration before it
(the parameters it changed, old → new level, and the slowdown it measured).

    GPAUTOTUNE_DATA=../shared/data python benchmarks/escape_moves.py \\
        convolution/RTX_Titan 40 --budget 70 --option poll_levels=nearest
"""

from __future__ import annotations

import argparse

from gpautotune.config import apply_overrides
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.strategies.gpr import ModelPick
from gpautotune.tuner import tune


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
    optimum = problem.optimum
    result = tune(problem, "gpr", args.budget, seed=args.seed, strategy_options=options)
    best = None
    for i, trial in enumerate(result.trials, start=1):
        pick = ModelPick.of(trial.info)
        if pick is not None and pick.escape and best is not None:
            moved = ", ".join(
                f"{k} {best.config[k]} → {v}"
                for k, v in trial.config.items()
                if v != best.config[k]
            )
            measured = "failed" if not trial.ok else f"{trial.value / optimum:.3f}"
            print(f"{i:4d}  escape  {moved}: {measured}")
        if trial.ok and (best is None or trial.value < best.value):
            best = trial
            print(f"{i:4d}  best    {trial.value / optimum:.4f}  {trial.config}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
