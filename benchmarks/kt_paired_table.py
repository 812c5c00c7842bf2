"""The default GPR against the fixed GP and the best peer on the 12 caches, run by run.

    python benchmarks/kt_paired_table.py [--new benchmarks/results/gpr/kt-loo40/runs.csv] \
        [--peers benchmarks/results/gpr/kt-loo40/peers-*runs.csv]
    python benchmarks/kt_paired_table.py --new benchmarks/results/gpr/kt-polish/runs.csv \
        --base benchmarks/results/gpr/kt-loo40/runs.csv --base-label GPR-loo40
    python benchmarks/kt_paired_table.py --new benchmarks/results/gpr/kt-derived/runs.csv \
        --new-label GPR-derived --base benchmarks/results/gpr/kt-derived/runs.csv --base-label GPR

Pairs each seed of the new runs (``--new``, a ``benchmarks/runs_csv.py`` file) with the
fixed GP's stored runs (the lent host's for gemm and convolution, the 2-core machine's for
pnpoly; the two machines repeat each other's GPR runs) and prints the markdown table of
docs/benchmarks/gpr-spaces.md ("The GP chosen from 40 rows on"): means at 60 and 120,
Wilcoxon p, runs better / worse, the best peer's means (:func:`best_peers`: the lowest mean of
``configs/peers-kt-caches.yaml`` and ``optuna-gp``, the reports in
``benchmarks/results/peers/``) and the runs above the bound (the best peer's mean at 60);
with ``--peers``, the default paired with each table's best peer at both budgets. With
``--base`` (and ``--base-label``), the new runs are an option's, paired with those runs
instead (the default's), and the columns say so; ``--new-label`` keeps one label of
``--new`` (both arms in one file), and tables without paired seeds are left out. With
``--peer-runs``, the best peers come from those runs (:func:`best_peers_of_runs`) and the
new runs are paired with them: the comparison given the caches' restrictions,

    python benchmarks/kt_paired_table.py --new benchmarks/results/gpr/kt-derived/runs.csv \
        --new-label GPR-derived --base benchmarks/results/gpr/kt-derived/runs.csv \
        --base-label GPR --peer-runs benchmarks/results/peers/kt-restricted/runs.csv \
        benchmarks/results/gpr/kt-loo40/peers-optuna-gp-runs.csv --names "none,default"

With ``--seed-sets``, ``--new`` holds the same strategy's runs on other seeds than
``--base``'s (nothing to pair): per table, both sets' means at 60 and 120, their worst
runs, the runs above the bound and the Mann-Whitney p of each budget,

    python benchmarks/kt_paired_table.py --seed-sets \
        --new benchmarks/results/gpr/kt-seeds21/runs.csv \
        --base benchmarks/results/gpr/kt-loo40/runs.csv --base-label GPR-loo40

With ``--must-shows``, ``--new`` holds the default's runs (several files, any seeds, every
row the default's, or ``PATH:LABEL`` for one label's rows of a file) and ``--peer-runs``
the peers' on the same seeds: per table, the best peer at 60 and at 120 from those runs,
the default paired with it by seed (Wilcoxon), the default's worst run at 120 against the
bound (the best peer's mean at 60) and its runs above it, the must-shows of
docs/benchmarks/gpr-spaces.md on every seed there is,

    python benchmarks/kt_paired_table.py --must-shows \
        --new benchmarks/results/gpr/kt-loo40/runs.csv benchmarks/results/gpr/kt-seeds21/runs.csv \
        --peer-runs benchmarks/results/peers/kt-40/seeds1-20.csv \
        benchmarks/results/peers/kt-40/seeds21-40.csv \
        --plot benchmarks/results/peers/kt-40/must-shows.png

``--shared-seeds`` keeps, per table, the seeds that the default and every peer ran, for a
peer run on fewer seeds than the others (``smac-hpo``, whose gemm runs are fewer):

    python benchmarks/kt_paired_table.py --must-shows --shared-seeds \
        --new benchmarks/results/gpr/kt-loo40/runs.csv:GPR-loo40 \
        --peer-runs benchmarks/results/peers/kt-40/seeds1-20.csv \
        benchmarks/results/peers/kt-smac/runs.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from scipy.stats import binomtest

from gpautotune.analysis import compare_paired, compare_samples

RESULTS = "benchmarks/results/gpr"
#: The peers' reports: configs/peers-kt-caches.yaml's and optuna-gp's (docs/peers.md).
PEER_REPORTS = ("benchmarks/results/peers/kt-caches-20", "benchmarks/results/peers/kt-caches-gp")
FAMILIES = ("gemm", "pnpoly", "convolution")


def best_peers() -> dict[str, tuple[tuple[float, str], ...]]:
    """Each cache's best peer at 60 and at 120: the lowest mean slowdown (3 decimals) of
    the peers' reports, GPR's labels and our random search (``RS``) left out."""
    summary = pd.concat(pd.read_csv(f) for d in PEER_REPORTS for f in Path(d).glob("*/summary.csv"))
    tables = [
        t
        for family in FAMILIES
        for t in sorted(summary.problem.unique())
        if t.startswith(f"{family}/")
    ]
    return _lowest(summary, tables)


def best_peers_of_runs(runs: pd.DataFrame) -> dict[str, tuple[tuple[float, str], ...]]:
    """:func:`best_peers` from the peers' runs (``runs_csv.py`` files) instead of their
    reports: each label's mean over its runs, tables in alphabetical order."""
    summary = (
        runs.rename(columns={"label": "strategy", "slowdown_60": 60, "slowdown_120": 120})
        .melt(["problem", "strategy"], [60, 120], var_name="budget", value_name="slowdown_mean")
        .groupby(["problem", "strategy", "budget"], as_index=False)
        .slowdown_mean.mean()
    )
    return _lowest(summary, sorted(summary.problem.unique()))


def _lowest(summary: pd.DataFrame, tables: list[str]) -> dict[str, tuple[tuple[float, str], ...]]:
    """Per table, the (mean, strategy) of the lowest ``slowdown_mean`` at 60 and at 120
    among ``summary``'s rows (problem, strategy, budget), GPR's labels and ``RS`` left out."""
    peers = _peers_only(summary, "strategy")
    best = {}
    for table in tables:
        first = [
            peers[(peers.problem == table) & (peers.budget == b)]
            .sort_values("slowdown_mean")
            .iloc[0]
            for b in (60, 120)
        ]
        best[table] = tuple((round(r.slowdown_mean, 3), r.strategy) for r in first)
    return best


def _peers_only(rows: pd.DataFrame, key: str = "label") -> pd.DataFrame:
    """The rows of peers (strategy named in column ``key``): GPR's labels and our random
    search (``RS``) left out."""
    return rows[~rows[key].str.startswith("GPR") & (rows[key] != "RS")]


def fixed_runs() -> pd.DataFrame:
    host = pd.read_csv(f"{RESULTS}/kt-hedge/runs.csv")
    local = pd.read_csv(f"{RESULTS}/kt-hedge-ei-lcb/runs.csv")
    host = host[(host.label == "GPR") & ~host.problem.str.startswith("pnpoly")]
    local = local[(local.label == "GPR") & local.problem.str.startswith("pnpoly")]
    return pd.concat([host, local.drop(columns="machine")])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--new",
        nargs="+",
        default=[f"{RESULTS}/kt-loo40/runs.csv"],
        help="runs_csv.py files (with --must-shows, a (table, seed) in several: the first's)",
    )
    parser.add_argument(
        "--peers", nargs="+", default=[], help="best peers' runs (runs_csv.py files)"
    )
    parser.add_argument(
        "--base", nargs="+", help="runs to pair with instead of the fixed GP's (files)"
    )
    parser.add_argument("--base-label", help="the label of --base's runs")
    parser.add_argument(
        "--names",
        help="BASE,NEW: what the columns call the two arms (default: fixed,default; with "
        "--base: default,option)",
    )
    parser.add_argument("--new-label", help="the label of --new's runs (default: every row)")
    parser.add_argument(
        "--peer-runs",
        nargs="+",
        default=[],
        help="the peers' runs (runs_csv.py files) to take the best peers from, instead of "
        "the reports (a comparison with other problem settings, e.g. restrictions)",
    )
    parser.add_argument(
        "--seed-sets",
        action="store_true",
        help="--new and --base are runs on different seeds: compare the two sets unpaired",
    )
    parser.add_argument(
        "--must-shows",
        action="store_true",
        help="--new is the default's runs, --peer-runs the peers' on the same seeds: the "
        "default against each table's best peer and the bound on its worst run, then every "
        "strategy's runs above the bounds",
    )
    parser.add_argument("--plot", help="with --must-shows: draw the table to this file")
    parser.add_argument(
        "--shared-seeds",
        action="store_true",
        help="with --must-shows: per table, only the seeds that the default and every peer "
        "ran (a peer run on fewer seeds than the others)",
    )
    args = parser.parse_args()
    new = _read(args.new)
    if args.shared_seeds and not args.must_shows:
        parser.error("--shared-seeds goes with --must-shows")
    if args.must_shows:  # a run in several --new files: the first file's
        new, peers = new.drop_duplicates(["problem", "seed"]), _read(args.peer_runs)
        if args.shared_seeds:
            new, peers = _shared_seeds(new, peers)
        must_shows(new, peers, args.plot)
        return
    new = new[new.label == args.new_label] if args.new_label else new
    if args.base:
        old = _read(args.base)
        old = old[old.label == args.base_label] if args.base_label else old
        base, named = "default", "option"
    else:
        old, base, named = fixed_runs(), "fixed", "default"
    if args.names:
        base, named = args.names.split(",")
    if args.seed_sets:
        seed_sets(old, new, best_peers())
        return
    print(
        f"| table | {base} at 60 | {named} at 60 | p | {base} at 120 (worst) | {named} at 120 "
        f"(worst) | p | better / worse at 120 | best peer at 60 / 120 | {named} ≤ best peer "
        f"at 60 / 120 | runs above the bound, {base} / {named} |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    counts = {"better": 0, "worse": 0, f"above {base}": 0, f"above {named}": 0}
    peer_runs = _read(args.peer_runs) if args.peer_runs else None
    best = best_peers() if peer_runs is None else best_peers_of_runs(peer_runs)
    for table, ((p60, n60), (p120, n120)) in best.items():
        a = old[old.problem == table].set_index("seed")
        b = new[new.problem == table].set_index("seed")
        seeds = a.index.intersection(b.index)
        if seeds.empty:  # a table the new runs leave out
            continue
        cells = [table]
        for budget in (60, 120):
            x, y = a.loc[seeds, f"slowdown_{budget}"], b.loc[seeds, f"slowdown_{budget}"]
            p = compare_paired(y, x).p_value
            if budget == 60:
                cells += [f"{x.mean():.3f}", f"{y.mean():.3f}", f"{p:.2g}"]
            else:
                cells += [
                    f"{x.mean():.4f} ({x.max():.3f})",
                    f"{y.mean():.4f} ({y.max():.3f})",
                    f"{p:.2g}",
                    f"{(y < x).sum()} / {(y > x).sum()}",
                ]
                counts["better"] += int((y < x).sum())
                counts["worse"] += int((y > x).sum())
        m60, m120 = b.loc[seeds, "slowdown_60"].mean(), b.loc[seeds, "slowdown_120"].mean()
        cells.append(f"{p60:.3f} ({n60}) / {p120:.3f} ({n120})")
        ok = ["yes" if round(m, 3) <= p else "**no**" for m, p in ((m60, p60), (m120, p120))]
        cells.append(" / ".join(ok))
        above = [int((runs.loc[seeds, "slowdown_120"] > p60).sum()) for runs in (a, b)]
        counts[f"above {base}"] += above[0]
        counts[f"above {named}"] += above[1]
        cells.append(f"{above[0]} / {above[1]}")
        print("| " + " | ".join(cells) + " |")
    print(f"\nat 120: {counts}")
    if args.peers or peer_runs is not None:
        against_peers(new, _read(args.peers) if args.peers else peer_runs, best)


def seed_sets(old: pd.DataFrame, new: pd.DataFrame, best: dict) -> None:
    """Print, per table of ``new``, the two seed sets' means at 60 and 120 (worst run at
    120), their runs above the bound and the Mann-Whitney p of each budget."""
    print(
        "| table | bound | first seeds: mean at 60 / 120 (worst) | above the bound | "
        "other seeds: mean at 60 / 120 (worst) | above the bound | Mann-Whitney p at 60 / 120 |"
    )
    print("|---|---|---|---|---|---|---|")
    for table, ((bound, _), _) in best.items():
        a, b = old[old.problem == table], new[new.problem == table]
        if b.empty:
            continue
        cells = [table, f"{bound:.3f}"]
        for runs in (a, b):
            cells.append(
                f"{runs.slowdown_60.mean():.4f} / {runs.slowdown_120.mean():.4f} "
                f"({runs.slowdown_120.max():.3f})"
            )
            cells.append(f"{int((runs.slowdown_120 > bound).sum())} of {len(runs)}")
        p = [compare_samples(b[f"slowdown_{k}"], a[f"slowdown_{k}"]).p_value for k in (60, 120)]
        cells.append(f"{p[0]:.3f} / {p[1]:.3f}")
        print("| " + " | ".join(cells) + " |")


def must_shows(mine: pd.DataFrame, peers: pd.DataFrame, plot: str | None = None) -> None:
    """Print, per table of ``peers``, the default (``mine``, every row) against the best
    peer at 60 and at 120 (lowest mean over its runs; Wilcoxon over the seeds both ran) and
    its worst run at 120 against the bound (the best peer's mean at 60), then the count of
    tables where each must-show holds; with ``plot``, draw the same to that file."""
    print(
        "| table | seeds | default at 60 | best peer at 60 (seeds) | p | default at 120 | "
        "best peer at 120 (seeds) | p | default's worst at 120 | bound | runs above it | "
        "peers whose worst meets it | rank of the default's worst |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    met = {"mean at 60": 0, "mean at 120": 0, "worst run": 0}
    best = {t: b for t, b in best_peers_of_runs(peers).items() if (mine.problem == t).any()}
    for table, table_best in best.items():
        runs = mine[mine.problem == table].set_index("seed")
        cells = [table, str(len(runs))]
        for budget, (mean, peer) in zip((60, 120), table_best, strict=True):
            theirs = peers[(peers.problem == table) & (peers.label == peer)].set_index("seed")
            seeds = runs.index.intersection(theirs.index)
            column = f"slowdown_{budget}"
            p = compare_paired(runs.loc[seeds, column], theirs.loc[seeds, column]).p_value
            ours = runs[column].mean()
            met[f"mean at {budget}"] += int(round(ours, 3) <= mean)
            cells += [f"{ours:.4f}", f"{mean:.3f} ({peer}, {len(theirs)})", f"{p:.2g}"]
        bound, worst = table_best[0][0], runs.slowdown_120.max()
        met["worst run"] += int(worst <= bound)
        above = int((runs.slowdown_120 > bound).sum())
        cells += [f"{worst:.3f}", f"{bound:.3f}", f"{above} of {len(runs)}"]
        worsts = _peers_only(peers[peers.problem == table]).groupby("label").slowdown_120.max()
        cells.append(", ".join(worsts[worsts <= bound].index) or "none")
        cells.append(f"{int((worsts < worst).sum()) + 1} of {len(worsts) + 1}")
        print("| " + " | ".join(cells) + " |")
    print(f"\ntables where it holds, of {len(best)}: {met}")
    _runs_above(mine, peers, {t: b[0][0] for t, b in best.items()})
    if plot:
        _plot_must_shows(mine, best, plot)


def _runs_above(mine: pd.DataFrame, peers: pd.DataFrame, bounds: dict[str, float]) -> None:
    """Print, for the default and each peer, its runs at 120 above each table's bound
    over the tables of ``bounds``, with the share's 95% Clopper-Pearson interval."""
    strategies = [("default", mine), *_peers_only(peers).groupby("label")]
    print("\n| strategy | runs | runs above the bound at 120 | share (95% interval) |")
    print("|---|---|---|---|")
    rows = []
    for label, runs in strategies:
        runs = runs[runs.problem.isin(list(bounds))]
        above = int((runs.slowdown_120 > runs.problem.map(bounds)).sum())
        rows.append((above / max(len(runs), 1), label, above, len(runs)))
    for share, label, above, n in sorted(rows):
        low, high = binomtest(above, n).proportion_ci(0.95) if n else (0.0, 1.0)
        print(f"| {label} | {n} | {above} | {share:.1%} ({low:.1%} to {high:.1%}) |")


def _plot_must_shows(mine: pd.DataFrame, best: dict, path: str) -> None:
    """Per table (rows), three panels: the default's mean against the best peer's at 60
    and at 120, and every run of the default at 120 against the bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tables = list(best)[::-1]
    fig, axes = plt.subplots(1, 3, figsize=(13, 0.42 * len(tables) + 1.4), sharey=True)
    y = range(len(tables))
    for ax, budget, k in ((axes[0], 60, 0), (axes[1], 120, 1)):
        ours = [mine[mine.problem == t][f"slowdown_{budget}"].mean() for t in tables]
        theirs = [best[t][k][0] for t in tables]
        ax.scatter(ours, y, marker="o", label="GPR (default)", zorder=3)
        ax.scatter(theirs, y, marker="x", color="C3", label="best peer", zorder=3)
        ax.set_title(f"mean best slowdown at {budget}")
    runs = [mine[mine.problem == t].slowdown_120.to_numpy() for t in tables]
    for i, values in enumerate(runs):
        axes[2].scatter(values, [i] * len(values), s=10, alpha=0.5, color="C0")
    axes[2].scatter(
        [best[t][0][0] for t in tables],
        y,
        marker="|",
        s=300,
        color="C3",
        label="bound: best peer's mean at 60",
    )
    axes[2].set_title("GPR's runs at 120 against the bound")
    axes[0].set_yticks(list(y), tables)
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _shared_seeds(mine: pd.DataFrame, peers: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per table, the rows of the seeds that ``mine`` and every label of ``peers`` ran."""
    keep = set()
    for table, rows in peers.groupby("problem"):
        seeds = set(mine.seed[mine.problem == table])
        for _, runs in rows.groupby("label"):
            seeds &= set(runs.seed)
        keep |= {(table, seed) for seed in seeds}

    def kept(rows: pd.DataFrame) -> pd.DataFrame:
        return rows[[(t, s) in keep for t, s in zip(rows.problem, rows.seed, strict=True)]]

    return kept(mine), kept(peers)


def _read(paths: list[str]) -> pd.DataFrame:
    """The rows of several ``runs_csv.py`` files; ``PATH:LABEL`` keeps one label's rows
    of that file (a file holding two arms)."""
    frames = []
    for spec in paths:
        path, _, label = spec.partition(":")
        rows = pd.read_csv(path)
        if label:
            if label not in set(rows.label):
                known = sorted(set(rows.label))
                raise SystemExit(f"{path} has no runs labelled {label!r}; it has {known}")
            rows = rows[rows.label == label]
        frames.append(rows)
    return pd.concat(frames)


def against_peers(
    new: pd.DataFrame, peers: pd.DataFrame, best: dict[str, tuple[tuple[float, str], ...]]
) -> None:
    """The default against each table's best peer, paired by seed where the peer's runs
    are in ``peers`` (Wilcoxon p; the peer's mean from these runs beside the report's)."""
    print("\n| table | budget | best peer | its mean here (report) | default | p |")
    print("|---|---|---|---|---|---|")
    for table, table_best in best.items():
        mine = new[new.problem == table].set_index("seed")
        for budget, (mean, peer) in zip((60, 120), table_best, strict=True):
            runs = peers[(peers.problem == table) & (peers.label == peer)].set_index("seed")
            if runs.empty or mine.empty:
                continue
            seeds = mine.index.intersection(runs.index)
            x, y = runs.loc[seeds, f"slowdown_{budget}"], mine.loc[seeds, f"slowdown_{budget}"]
            p = compare_paired(y, x).p_value
            print(
                f"| {table} | {budget} | {peer} | {x.mean():.3f} ({mean:.3f}) "
                f"| {y.mean():.4f} | {p:.2g} |"
            )


if __name__ == "__main__":
    main()
