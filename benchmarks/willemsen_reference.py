"""The methodology score against Willemsen et al.'s own implementation, on real runs.

Run (from the repository root; needs ``pip install autotuning-methodology``)::

    PYTHONPATH=$PWD python benchmarks/willemsen_reference.py [--budget 60]
        [--runs random=25 sobol=25 gpr=10]

Each strategy runs ``runs`` times (seeds 0..) on the seeds' K40c Laplacian table. The
table gives, per strategy, the mean over budgets 1..B of ``P(b)``: ours with the exact
conventions (the default: mean run, exact random expectation), ours with the package's
conventions (median run by rank, the package's random curve), the package's own
(:func:`gpautotune.analysis.reference_methodology_score` drives its classes), and the largest
difference between the last two over all budgets.
"""

from __future__ import annotations

import argparse

import numpy as np

from gpautotune.analysis import methodology_score, reference_methodology_score
from gpautotune.problems import laplacian_replay
from gpautotune.tuner import tune


def curves(strategy: str, runs: int, budget: int) -> np.ndarray:
    problem, out = laplacian_replay(), []
    for seed in range(runs):
        trials = tune(problem, strategy, budget, seed=seed).trials
        out.append(np.minimum.accumulate([t.value if t.ok else np.inf for t in trials]))
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--runs", nargs="+", default=["random=25", "sobol=25", "gpr=10"])
    args = parser.parse_args()
    values = laplacian_replay().measured_values()
    optimum = float(values.min())
    print(
        "| strategy | runs | ours, exact (default) | ours, package convention | package "
        "| max abs diff |"
    )
    print("|---|---|---|---|---|---|")
    for item in args.runs:
        strategy, runs = item.split("=")
        c = curves(strategy, int(runs), args.budget)
        exact = methodology_score(c, values, optimum)
        ours = methodology_score(c, values, optimum, convention="package")
        theirs = reference_methodology_score(c, values)
        diff = float(np.max(np.abs(ours - theirs)))
        print(
            f"| {strategy} | {runs} | {exact.mean():.4f} | {ours.mean():.6f} "
            f"| {theirs.mean():.6f} | {diff:.1e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
