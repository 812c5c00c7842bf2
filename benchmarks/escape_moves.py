"""One GPR run on a Kernel Tuner cache, made afresh, traced: each new best (evaluation,
slowdown, configuration) and each escape's move from the best configuration before it
(the parameters it changed, old → new level, and the slowdown it measured).

    GPAUTOTUNE_DATA=../shared/data python benchmarks/escape_moves.py \\
        convolution/RTX_Titan 40 --budget 70 --option poll_levels=nearest

With ``--trials``, every trial instead: its configuration, value and the info the
strategy recorded (timings left out; the fits' hyperparameters as exact floats), one line
each, so that two versions of the code can be shown to make the same run (a refactor's
check; the same lines mean the same fits and the same picks):

    git worktree add /tmp/base HEAD~1
    GPAUTOTUNE_DATA=../shared/data PYTHONPATH=/tmp/base python benchmarks/escape_moves.py \\
        gemm/RTX_3060_laptop 3 --trials --option escape=far > base.txt
    GPAUTOTUNE_DATA=../shared/data python benchmarks/escape_moves.py \\
        gemm/RTX_3060_laptop 3 --trials --option escape=far > new.txt
    cmp base.txt new.txt
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpautotune.config import apply_overrides
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.strategies.gpr import ModelPick
from gpautotune.trial import Trial
from gpautotune.tuner import tune


def untimed(info: Any) -> Any:
    """``info`` without its timings (keys ending in ``_s``), at every depth."""
    if isinstance(info, dict):
        return {k: untimed(v) for k, v in info.items() if not k.endswith("_s")}
    return info


def print_trials(trials: Sequence[Trial]) -> None:
    """Each trial's configuration, value (None where it failed) and untimed info."""
    for trial in trials:
        value = trial.value if trial.ok else None
        info = json.dumps(untimed(trial.info), sort_keys=True, default=str)
        print(json.dumps(trial.config, sort_keys=True), value, info)


def print_moves(trials: Sequence[Trial], optimum: float) -> None:
    """Each new best and each escape's move from the best before it."""
    best = None
    for i, trial in enumerate(trials, start=1):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "problem", help="a cache of kt-caches/ (gemm/RTX_3090), or a cache or T4 file"
    )
    parser.add_argument("seed", type=int)
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument(
        "--option", action="append", default=[], help="a GPR option as KEY=VALUE (repeatable)"
    )
    parser.add_argument(
        "--trials", action="store_true", help="every trial with its recorded info instead"
    )
    args = parser.parse_args(argv)
    options = apply_overrides({}, args.option)  # YAML scalars; ConfigError names a bad one
    given = Path(args.problem)  # a cache or T4 file, or a cache's name under kt-caches/
    problem = kt_cache_problem(given if given.is_file() else f"kt-caches/{args.problem}.json.gz")
    result = tune(problem, "gpr", args.budget, seed=args.seed, strategy_options=options)
    if args.trials:
        print_trials(result.trials)
    else:
        print_moves(result.trials, problem.optimum)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
