"""Pair GPR's default with the single GP on SPAPT runs, seed by seed.

Run: python benchmarks/spapt_pairs_table.py benchmarks/results/spapt/pairs-host/bicg-runs.csv
     python benchmarks/spapt_pairs_table.py --arm default=DIR/tuning_gpr_runs.csv \
         --arm fixed=DIR/fixed/tuning_gpr_runs.csv

Either one CSV with a row per run (``arm`` ``default`` or ``fixed``, then the columns of
``spapt_tuning.py``'s runs file, as ``spapt_pairs.sh``'s runs are gathered), or
``--arm NAME=CSV``, each arm's own runs file. Printed: per arm the mean best speedup with a
Student-t 95% interval, the best time, and how many seeds the default is ahead on; the
paired Wilcoxon test on the speedups and on the best times (each arm's speedup divides by
its own baseline measurement, the best time does not). When the runs name their ``host``
(the machine and load they ran under), a row per host precedes the row of all seeds.
"""

from __future__ import annotations

import argparse
import math

import pandas as pd
from scipy import stats


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="?", help="runs CSV with an arm column")
    parser.add_argument(
        "--arm", action="append", default=[], help="NAME=CSV: one arm's runs (default, fixed)"
    )
    args = parser.parse_args()
    if bool(args.runs) == bool(args.arm):
        parser.error("give either one runs CSV with an arm column or --arm default=... fixed=...")
    arms = [item.partition("=") for item in args.arm]
    runs = (
        pd.read_csv(args.runs)
        if args.runs
        else pd.concat(pd.read_csv(path).assign(arm=name) for name, _, path in arms)
    )
    hosts = "host" in runs.columns
    print(
        "| kernel |" + (" host |" if hosts else "") + " seeds | default: mean speedup [95% CI] "
        "| single GP | default ahead | Wilcoxon p (speedup) "
        "| best time, default / single GP (ms) | p (best time) |"
    )
    print("|---|---|---|---|---|---|---|---|" + ("---|" if hosts else ""))
    for kernel, runs_k in runs.groupby("kernel"):
        groups = [*runs_k.groupby("host", sort=False), ("all", runs_k)] if hosts else []
        for host, g in groups or [(None, runs_k)]:
            print(_row(kernel, host, g))


def _row(kernel: str, host: str | None, g: pd.DataFrame) -> str:
    """One table row: the two arms' runs of ``g`` paired by seed (by host and seed where
    the runs name their host: a seed may have run on several)."""
    index = ["host", "seed"] if "host" in g.columns else "seed"
    speed = g.pivot(index=index, columns="arm", values="best_speedup").dropna()
    best = g.pivot(index=index, columns="arm", values="best_s").loc[speed.index]
    cells = []
    for arm in ("default", "fixed"):
        s = speed[arm]
        half = stats.t.ppf(0.975, len(s) - 1) * s.std(ddof=1) / math.sqrt(len(s))
        cells.append(f"{s.mean():.2f} [{s.mean() - half:.2f}, {s.mean() + half:.2f}]")
    ahead = int((speed["default"] > speed["fixed"]).sum())
    p_speed = stats.wilcoxon(speed["default"], speed["fixed"]).pvalue
    p_best = stats.wilcoxon(best["default"], best["fixed"]).pvalue
    where = f" {host} |" if host is not None else ""
    return (
        f"| {kernel} |{where} {len(speed)} | {cells[0]} | {cells[1]} | {ahead} of {len(speed)} "
        f"| {p_speed:.2f} | {1e3 * best['default'].mean():.3f} / "
        f"{1e3 * best['fixed'].mean():.3f} | {p_best:.2f} |"
    )


if __name__ == "__main__":
    main()
