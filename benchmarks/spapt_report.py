"""GPR vs random sampling on SPAPT kernels, and which factors matter (issue 8).

Reads what ``benchmarks/spapt_tuning.py`` wrote for two strategies (``tuning_<s>_runs.csv``
under ``--out``, and the trials in its journal) and prints, per kernel:

- the mean best speedup over the baseline with its Student-t 95% CI, the iteration of the
  best, and a Mann-Whitney test of the best speedups (GPR vs random);
- Sobol indices (S1, ST with 95% intervals over GP posterior paths x bootstrap) of every
  factor on the log run time, over the *valid* configurations, from a GP fitted to every
  successful trial of both strategies on that kernel, and the share of the binary factors
  (``OMP``, ``SCR``, ``VEC*``).

Usage (after the tuning runs; PYTHONPATH=$PWD)::

    python benchmarks/spapt_report.py --kernels bicg dgemv3 --strategies gpr random

Writes ``<out>/sobol-<kernel>.csv`` and ``.png``.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd
from scipy import stats

from gpautotune.analysis.explain import fit_run_surrogate, plot_indices, strategy_indices
from gpautotune.problems.spapt import SpaptProblem
from gpautotune.storage import Journal

BINARY = ("OMP", "SCR", "VEC")


def runs_table(out: Path, strategies: list[str]) -> pd.DataFrame:
    frames = []
    for s in strategies:
        path = out / f"tuning_{s}_runs.csv"
        if not path.is_file():
            raise SystemExit(
                f"{path} is missing: run benchmarks/spapt_tuning.py --strategy {s} first"
            )
        frames.append(pd.read_csv(path).assign(strategy=s))
    return pd.concat(frames, ignore_index=True)


def comparison(runs: pd.DataFrame, strategies: list[str]) -> str:
    lines = [
        "| kernel | strategy | runs | budget | mean best speedup [95% CI] | min | max | "
        "iteration of best (mean, median) | failed trials per run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    tests = []
    for kernel, g in runs.groupby("kernel", sort=False):
        for s in strategies:
            r = g[g.strategy == s]
            x = r.best_speedup.to_numpy(float)
            half = (
                stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
                if len(x) > 1
                else math.nan
            )
            failed = (
                r[[c for c in r.columns if c.startswith("n_") and c != "n_ok"]].sum(axis=1).mean()
            )
            lines.append(
                f"| {kernel} | {s} | {len(x)} | {int(r.trials.max())} | {x.mean():.2f} "
                f"[{x.mean() - half:.2f}, {x.mean() + half:.2f}] | {x.min():.2f} | {x.max():.2f} | "
                f"{r.best_iteration.mean():.0f}, {r.best_iteration.median():.0f} | {failed:.1f} |"
            )
        a, b = (g[g.strategy == s].best_speedup.to_numpy(float) for s in strategies[:2])
        p = stats.mannwhitneyu(a, b, alternative="two-sided").pvalue
        tests.append(
            f"{kernel}: {strategies[0]} - {strategies[1]} = {a.mean() - b.mean():+.2f}x "
            f"({(a.mean() / b.mean() - 1) * 100:+.1f}%), Mann-Whitney p = {p:.3g}"
        )
    return "\n".join(lines + [""] + tests)


def kernel_trials(journal: Journal, kernel: str, strategies: list[str]) -> tuple[object, list]:
    """A GPR run's record of ``kernel`` (its settings build the model) and every trial of
    every finished run of ``kernel`` by ``strategies``."""
    runs = [
        r
        for r in journal.runs()
        if r.problem == f"spapt/{kernel}" and r.strategy in strategies and r.status == "finished"
    ]
    gpr = [r for r in runs if r.strategy == "gpr"]
    if not gpr:
        raise SystemExit(f"no finished GPR run of {kernel} in {journal.path}")
    trials = [t for r in runs for t in journal.trials(r.id)]
    return gpr[-1], trials


def sensitivity(
    journal: Journal, kernel: str, strategies: list[str], out: Path, n: int, paths: int
) -> str:
    record, trials = kernel_trials(journal, kernel, strategies)
    space = SpaptProblem(kernel).space
    strategy = fit_run_surrogate(record, space, trials)
    result = strategy_indices(strategy, domain="valid", n=n, paths=paths, bootstrap=100, seed=0)
    table = result.table
    table.to_csv(out / f"sobol-{kernel}.csv", index=False)
    ok = sum(t.ok for t in trials)
    plot_indices(
        table,
        out / f"sobol-{kernel}.png",
        title=f"{kernel} (small preset): log time, valid configurations, GP on {ok} trials",
    )
    binary = table[table.parameter.str.startswith(BINARY)]
    lines = [
        f"### {kernel}: {ok} successful trials of {len(trials)}; {result.method}",
        "",
        "| rank | factor | S1 [95% CI] | ST [95% CI] |",
        "|---|---|---|---|",
    ]
    for _, r in table.sort_values("rank").head(8).iterrows():
        mark = " (binary)" if r.parameter.startswith(BINARY) else ""
        lines.append(
            f"| {int(r['rank'])} | {r.parameter}{mark} "
            f"| {r.S1:.3f} [{r.S1_low:.3f}, {r.S1_high:.3f}] | "
            f"{r.ST:.3f} [{r.ST_low:.3f}, {r.ST_high:.3f}] |"
        )
    lines.append("")
    lines.append(
        f"binary factors ({', '.join(binary.parameter)}): "
        f"ranks {sorted(binary['rank'].astype(int).tolist())} of {len(table)}; "
        f"sum of their S1 = {binary.S1.sum():.3f} (all factors: {table.S1.sum():.3f})"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", nargs="+", default=["bicg", "dgemv3"])
    parser.add_argument("--strategies", nargs=2, default=["gpr", "random"])
    parser.add_argument("--journal", default="results/spapt/tuning.db")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/spapt"))
    parser.add_argument(
        "--n", type=int, default=1024, help="valid configurations for the Sobol estimators"
    )
    parser.add_argument("--paths", type=int, default=32, help="GP posterior paths")
    args = parser.parse_args()
    runs = runs_table(args.out, args.strategies)
    runs = runs[runs.kernel.isin(args.kernels)]
    print(comparison(runs, args.strategies))
    with Journal(args.journal) as journal:
        for kernel in args.kernels:
            print()
            print(sensitivity(journal, kernel, args.strategies, args.out, args.n, args.paths))


if __name__ == "__main__":
    main()
