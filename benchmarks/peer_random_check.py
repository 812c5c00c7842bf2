"""The peers' random samplers against the exact random-search expectation, from journals.

For every problem of a comparison journal whose table is known (replays), and every
random sampler in it (ours and the peers'), the mean best slowdown at each checkpoint
is compared with the exact expectation of random search without replacement (failed
rows costing a draw; :func:`gpautotune.analysis.random_best_moments`):
``z = (mean - E) / (sd / sqrt(n))`` with the exact standard deviation ``sd`` of one
run's best, so ``|z| < 2`` is what a correct sampler gives 95% of the time.

Run::

    python benchmarks/peer_random_check.py results/peers-k40c.db results/peers-random-check.db
"""

from __future__ import annotations

import argparse

import numpy as np

from gpautotune.analysis import load_runs, random_best_moments
from gpautotune.config import Section, build_problem

RANDOM = ("random", "optuna-random", "kt-random_sample", "smac-random")


def check(path: str, checkpoints: list[int]) -> list[str]:
    """Markdown rows ``| problem | sampler | n | budget | mean | E | z |`` of one journal."""
    table = load_runs(path)
    rows = []
    for name, info in table.problems.items():
        if info.section is None or not info.optimum:
            continue
        problem = build_problem(Section(**info.section), factory_names=True)
        values = problem.measured_values()
        failures = int(getattr(problem, "failed_rows", 0))
        mean, sd = random_best_moments(values, checkpoints, failures=failures)
        for g in table.of(name):
            if g.strategy not in RANDOM:
                continue
            for b, m, s in zip(checkpoints, mean, sd, strict=True):
                x = g.at(b)
                z = (x.mean() - m) / (s / np.sqrt(len(x)))
                rows.append(
                    f"| {name} | {g.label} | {len(x)} | {b} | {x.mean() / info.optimum:.4f}"
                    f" | {m / info.optimum:.4f} | {z:+.2f} |"
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journals", nargs="+")
    parser.add_argument("--checkpoints", type=int, nargs="+", default=[60, 120])
    args = parser.parse_args()
    print("| problem | sampler | runs | budget | mean slowdown | exact expectation | z |")
    print("|---|---|---|---|---|---|---|")
    for path in args.journals:
        print("\n".join(check(path, args.checkpoints)))


if __name__ == "__main__":
    main()
