"""How a random forest ranks the configurations under the bound in the default's trapped runs.

    GPAUTOTUNE_DATA=../shared/data python benchmarks/forest_ranks.py [--workers 2] \
        [--out benchmarks/results/gpr/forest_ranks.csv]

The companion of ``trap_ranks.py``, on its eight trapped runs: each run is made again (it
repeats its stored run), and at evaluations 40, 60, 90 and 119 a random forest
(:class:`~gpautotune.surrogate.ForestSurrogate`, seeded by the run's seed) is fitted to the
kernel's inputs and the log values of the trials before that step, failures imputed at the
worst value as for the GP. Its expected improvement, times the feasibility classifier's
probability of success where configurations fail, ranks every unmeasured configuration of
the table; the rows give the best rank held by a configuration under the bound (0: the
first) beside the GP's own rank at that step from ``trap_ranks.csv``.
"""

from __future__ import annotations

import argparse
import csv
import warnings

import numpy as np
from trap_ranks import BOUNDS, RUNS, STEPS, write_rows

from gpautotune.acquisition import expected_improvement
from gpautotune.parallel import dask_client
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.strategies import make_strategy
from gpautotune.surrogate import ForestSurrogate
from gpautotune.tuner import tune

COLUMNS = ["problem", "seed", "step", "gp_rank", "forest_rank"]


def study(problem_name: str, seed: int, gp_ranks: dict) -> list[dict]:
    warnings.simplefilter("ignore")
    problem = kt_cache_problem(f"kt-caches/{problem_name}.json.gz")
    trials = tune(problem, "gpr", 120, seed=seed).trials
    space = problem.space
    table = problem._index[problem._allowed]
    truth = problem._values[problem._allowed] / problem.optimum
    under = np.isfinite(truth) & (truth <= BOUNDS[problem_name])
    rows = space.to_index([t.config for t in trials])
    keys = space.row_keys(table)
    out = []
    for step in STEPS:
        strategy = make_strategy("gpr", space, seed=seed)
        strategy.tell(trials[:step])
        X, y = strategy._training_data(trials[:step])
        d = strategy.gp.d
        z = np.log(y)
        forest = ForestSurrogate(seed).fit(X[:, :d], z)
        mean, sd = forest.predict(strategy.features(table)[:, :d])
        p = strategy._success(table, strategy._feasibility_model(trials[:step]))
        score = strategy._weight(expected_improvement(mean, sd, float(z.min())), p, "ei")
        seen = np.isin(keys, space.row_keys(rows[:step]))
        score = np.where(seen, -np.inf, score)
        rank = np.empty(len(score), dtype=int)
        rank[np.argsort(-score, kind="stable")] = np.arange(len(score))
        left = under & ~seen
        out.append(
            {
                "problem": problem_name,
                "seed": seed,
                "step": step,
                "gp_rank": gp_ranks.get((problem_name, str(seed), str(step)), ""),
                "forest_rank": int(rank[left].min()) if left.any() else "",
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--trap-ranks", default="benchmarks/results/gpr/trap_ranks.csv")
    parser.add_argument("--out", default="benchmarks/results/gpr/forest_ranks.csv")
    args = parser.parse_args()
    gp_ranks = {
        (r["problem"], r["seed"], r["step"]): r["best_rank"]
        for r in csv.DictReader(open(args.trap_ranks))
    }
    runs = [(problem, seed) for problem, seed, _ in RUNS]
    with dask_client(workers=args.workers) as client:  # one run per task
        futures = [client.submit(study, p, s, gp_ranks, pure=False) for p, s in runs]
        rows = [r for result in client.gather(futures) for r in result]
    write_rows(rows, COLUMNS, args.out)


if __name__ == "__main__":
    main()
