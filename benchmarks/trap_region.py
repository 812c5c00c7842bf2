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
level at most) that reach one; with ``--cells N``, the best rank that a cell of two of the
region's parameters at its levels holds after N trials among every cell of two parameters,
ordered by how far their measurements fall short of their share of the table (0 first:
the cell ``escape: coverage`` looks in). A run that ends above the bound having measured
the region only a few times, and slowly, was misled by those few samples.
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd

from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.storage import Journal


def region(problem, bound: float) -> tuple[dict, np.ndarray]:
    """The levels shared by every configuration of the cache ``problem``'s table under
    ``bound``, and the level rows of the configurations under ``bound``."""
    rows = problem._index[problem._allowed]
    slowdown = problem._values[problem._allowed] / problem.optimum
    under = problem.space.to_configs(rows[slowdown <= bound])
    shared = {k: v for k, v in under[0].items() if all(c[k] == v for c in under)}
    configs = problem.space.to_configs(rows)
    inside = np.array([all(c[k] == v for k, v in shared.items()) for c in configs])
    print(
        f"{problem.name}: region {shared}, {int(inside.sum())} of {len(rows)} configurations, "
        f"{int((slowdown[inside] <= bound).sum())} of {int((slowdown <= bound).sum())} "
        "under the bound"
    )
    return shared, rows[slowdown <= bound]


def cell_rank(space, table: np.ndarray, measured: np.ndarray, shared: dict) -> int | str:
    """The best rank (0: measured furthest short of its share of the table) that a cell
    of two of the region's parameters at the region's levels holds among every cell of
    two parameters (``escape: coverage`` picks rank 0)."""
    inside = [space.names.index(k) for k in shared]
    if len(inside) < 2:
        return ""
    row = space.to_index([{**space.to_configs(table[:1])[0], **shared}])[0]
    cells = []
    for a, b in itertools.combinations(range(space.dims), 2):
        for la, lb in set(zip(table[:, a], table[:, b], strict=True)):
            share = ((table[:, a] == la) & (table[:, b] == lb)).mean()
            seen = ((measured[:, a] == la) & (measured[:, b] == lb)).sum()
            ours = a in inside and b in inside and (row[a], row[b]) == (la, lb)
            cells.append((seen - len(measured) * share, ours))
    cells.sort(key=lambda c: c[0])
    return next(i for i, c in enumerate(cells) if c[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--table", required=True)
    parser.add_argument("--bound", type=float, required=True)
    parser.add_argument("--label")
    parser.add_argument("--budget", type=int, default=120, help="runs shorter are left out")
    parser.add_argument("--out")
    parser.add_argument("--cells", type=int, help="the region's best cell rank after N trials")
    args = parser.parse_args()
    problem = kt_cache_problem(f"kt-caches/{args.table}.json.gz")
    shared, under = region(problem, args.bound)
    space, table, optimum = problem.space, problem._index[problem._allowed], problem.optimum
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
        cells = {}
        if args.cells:
            measured = space.to_index([t.config for t in trials[: args.cells]])
            cells = {f"cell_rank_{args.cells}": cell_rank(space, table, measured, shared)}
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
                **cells,
            }
        )
    frame = pd.DataFrame(out).sort_values(["label", "seed"])
    print(frame.to_string(index=False))
    if args.out:
        frame.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
