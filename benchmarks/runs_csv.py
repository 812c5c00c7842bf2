"""Every run's slowdown (best / the table's optimum) at given budgets, one row per run,
from comparison journals: the per-seed record that later sessions pair new runs with.

    python benchmarks/runs_csv.py results/a.db [results/b.db ...] --budget 60 --budget 120 \
        --out runs.csv
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from gpautotune.analysis import load_runs


def rows(path: str, budgets: list[int]) -> list[dict]:
    table = load_runs(path)
    out = []
    for g in table.groups:
        info = table.problems.get(g.problem)
        optimum = info.optimum if info is not None else None
        if not optimum:
            continue
        for b in budgets:
            for seed, value in g.by_seed(b).items():
                out.append(
                    {
                        "problem": g.problem,
                        "label": g.label,
                        "seed": seed,
                        "budget": b,
                        "slowdown": value / optimum,
                    }
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journals", nargs="+")
    parser.add_argument("--budget", type=int, action="append", default=None)
    parser.add_argument("--out", default="-")
    args = parser.parse_args(argv)
    budgets = args.budget or [60, 120]
    long = pd.DataFrame([r for p in args.journals for r in rows(p, budgets)])
    wide = long.pivot_table(
        index=["problem", "label", "seed"], columns="budget", values="slowdown"
    ).rename(columns=lambda b: f"slowdown_{b}")
    wide = wide.reset_index().sort_values(["problem", "label", "seed"])
    wide.to_csv(sys.stdout if args.out == "-" else args.out, index=False, float_format="%.6f")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
