"""How often each run measured the region that holds every configuration under the bound.

    GPAUTOTUNE_DATA=../shared/data python benchmarks/trap_region.py results/a.db \
        --table gemm/RTX_3060_laptop --bound 1.123 [--label GPR] [--out region.csv]

The bound of issue #18 on a cache is the best peer's mean slowdown at 60 evaluations
(docs/benchmarks/gpr-spaces.md). The *region* is read from the table alone: the parameters
whose level is the same in every configuration under the bound, at that level (on
gemm/RTX_3060_laptop, MWG = NWG = 128 and SB = 1: 878 of the 10,000 configurations, all 27
under the bound among them). For each run of the journal on that table (of one label, if
given; runs shorter than ``--budget``, 120, left out): its slowdown at ``--budget``, how
many of its measurements fell in the region, the first of them (1-based) and the fastest
one's slowdown; from its best configuration, the fewest parameters a configuration under
the bound differs in, and the fewest adjacent moves (each moves every parameter by one
level at most) that reach one. A run that ends above the bound having measured the region
only a few times, and slowly, was misled by those few samples.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.storage import Journal


def region(name: str, bound: float) -> tuple[dict, float, np.ndarray]:
    """The levels shared by every configuration of the table under ``bound``, the
    table's optimum and the level rows of the configurations under ``bound``."""
    problem = kt_cache_problem(f"kt-caches/{name}.json.gz")
    rows = problem._index[problem._allowed]
    slowdown = problem._values[problem._allowed] / problem.optimum
    under = problem.space.to_configs(rows[slowdown <= bound])
    shared = {k: v for k, v in under[0].items() if all(c[k] == v for c in under)}
    configs = problem.space.to_configs(rows)
    inside = np.array([all(c[k] == v for k, v in shared.items()) for c in configs])
    print(
        f"{name}: region {shared}, {int(inside.sum())} of {len(rows)} configurations, "
        f"{int((slowdown[inside] <= bound).sum())} of {int((slowdown <= bound).sum())} "
        "under the bound"
    )
    return shared, problem.optimum, rows[slowdown <= bound]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--table", required=True)
    parser.add_argument("--bound", type=float, required=True)
    parser.add_argument("--label")
    parser.add_argument("--budget", type=int, default=120, help="runs shorter are left out")
    parser.add_argument("--out")
    args = parser.parse_args()
    shared, optimum, under = region(args.table, args.bound)
    space = kt_cache_problem(f"kt-caches/{args.table}.json.gz").space
    journal = Journal(args.db, read_only=True)
    out = []
    for run in journal.runs():
        if run.problem != args.table or (args.label and run.label != args.label):
            continue
        trials = journal.trials(run.id)[: args.budget]
        if len(trials) < args.budget:
            continue
        values = [t.value / optimum if t.ok else np.inf for t in trials]
        hits = [i for i, t in enumerate(trials) if all(t.config[k] == v for k, v in shared.items())]
        best = space.to_index([trials[int(np.argmin(values))].config])[0]
        out.append(
            {
                "label": run.label,
                "seed": run.seed,
                "evaluations": len(trials),
                "final": round(min(values), 4),
                "in_region": len(hits),
                "first_in_region": hits[0] + 1 if hits else "",
                "best_in_region": round(min(values[i] for i in hits), 4) if hits else "",
                "parameters_to_under": int((under != best).sum(axis=1).min()),
                "levels_to_under": int(np.abs(under - best).max(axis=1).min()),
            }
        )
    frame = pd.DataFrame(out).sort_values(["label", "seed"])
    print(frame.to_string(index=False))
    if args.out:
        frame.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
