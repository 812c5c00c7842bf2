"""Benchmark 2: measurement noise of the same configurations, and whether min-of-4 ranks them.

Each round measures every configuration once (fresh min-of-4 per size), in a shuffled
order; across rounds we report the coefficient of variation (CV) of each configuration's
value, the within-measurement CV of the 4 timed runs of one size (averaged over sizes),
and the Kendall tau between the rankings of every pair of rounds.

    PYTHONPATH=. python benchmarks/laplacian_noise.py --configs 20 --rounds 5 \
        --out benchmarks/results/laplacian
"""

from __future__ import annotations

import argparse
import itertools
import logging
from pathlib import Path

import numpy as np
import pandas as pd
from laplacian_common import PARAMS, device_arguments, environment, problem_from, write_json
from scipy.stats import kendalltau

from gpautotune.execution import IsolatedEvaluator


def measure_rounds(problem, configs, rounds: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    evaluator, rows = IsolatedEvaluator(timeout_s=problem.timeout_s), []
    try:
        for r in range(rounds):
            for i in rng.permutation(len(configs)):
                m = evaluator(problem, configs[i]).measurement
                per_size = [np.asarray(t) for t in m.metrics.get("kernel_times_s", [])]
                rows.append(
                    {
                        "round": r,
                        "config": int(i),
                        "status": m.status.value,
                        "value": m.value,
                        "sample_cv": float(np.mean([t.std() / t.mean() for t in per_size]))
                        if m.ok
                        else None,
                        **{p: configs[i][p] for p in PARAMS},
                    }
                )
    finally:
        evaluator.close()
    return pd.DataFrame(rows)


def summarise(table: pd.DataFrame) -> dict:
    ok = table[table.status == "ok"]
    wide = ok.pivot(index="config", columns="round", values="value").dropna()
    cv = wide.std(axis=1, ddof=1) / wide.mean(axis=1)
    taus = [
        kendalltau(wide[a], wide[b]).statistic for a, b in itertools.combinations(wide.columns, 2)
    ]
    ranks = wide.rank(axis=0)
    pairs = list(itertools.combinations(wide.index, 2))
    same = [
        bool(
            np.all(
                np.sign(ranks.loc[a] - ranks.loc[b])
                == np.sign(ranks.loc[a].iloc[0] - ranks.loc[b].iloc[0])
            )
        )
        for a, b in pairs
    ]
    ordered = np.sort(wide.median(axis=1).to_numpy())
    gaps = np.diff(ordered) / ordered[:-1]
    return {
        "configs_measured": int(len(wide)),
        "rounds": int(wide.shape[1]),
        "cv_across_rounds": {
            "median": float(cv.median()),
            "p90": float(cv.quantile(0.9)),
            "max": float(cv.max()),
        },
        "raw_sample_cv_median": float(ok.sample_cv.median()),
        "kendall_tau_between_rounds": {"mean": float(np.mean(taus)), "min": float(np.min(taus))},
        "pairs_ordered_identically_in_all_rounds": float(np.mean(same)),
        "neighbour_gap_median": float(np.median(gaps)),
        "value_spread_max_over_min": float(ordered[-1] / ordered[0]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    device_arguments(parser)
    parser.add_argument("--configs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/laplacian"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    problem = problem_from(args)
    configs = problem.space.sample(args.configs, method="random", seed=args.seed)
    table = measure_rounds(problem, configs, args.rounds, args.seed)
    table.to_csv(args.out / "noise.csv", index=False)
    summary = {**summarise(table), "environment": environment(problem)}
    write_json(args.out / "noise.json", summary)
    print({k: v for k, v in summary.items() if k != "environment"})


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main()
