"""Baseline strategies on the seeds' Laplacian K40c replay (seed 003 Table 11.3) and on
the 54-factor ConstrainedBitsProblem.

Standalone (it calls :func:`gpautotune.tune`; the lead's ``gpautotune compare`` does the
same on Dask). Repetition ``r`` of every method uses seed ``r``.

Usage::

    python benchmarks/baselines.py time --reps 3                  # seconds per repetition
    python benchmarks/baselines.py laplacian --reps 200 --workers 2
    python benchmarks/baselines.py bits --reps 5 --workers 2
    python benchmarks/baselines.py report                         # tables + figure from the CSVs
    python benchmarks/baselines.py dlmt-steps --reps 100          # DLMT's first fixing decisions

Outputs go to ``benchmarks/results/baselines/``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from multiprocessing import Pool  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from gpautotune.problems import ConstrainedBitsProblem, find_data, laplacian_replay  # noqa: E402
from gpautotune.space import Space  # noqa: E402
from gpautotune.strategies import Strategy, make_strategy  # noqa: E402
from gpautotune.strategies.genetic import GeneticAlgorithm  # noqa: E402
from gpautotune.strategies.greedy import GreedySearch  # noqa: E402
from gpautotune.tuner import tune  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "baselines"

#: Seed 003 eq. 11.2 (the thesis' Laplacian model; ``1/threads`` twice in the text is a typo).
LAPLACIAN_MODEL = (
    "y_component_number + 1/y_component_number + vector_length + lws_y + 1/lws_y + load_overlap"
    " + temporary_size + elements_number + 1/elements_number + threads_number + 1/threads_number"
)
#: Seed 000 §6: the model (and factors fixed) at each step of the automated LM/RQ runs.
SEED_000_SCHEDULE = (
    "vector_length + lws_y",
    "y_component_number",
    "elements_number",
    "threads_number + 1/threads_number",
)
#: The factors fixed at each step by the seeds' automated DLMT script (phrb/dopt_anova_experiments).
SEED_003_DLMT_SCHEDULE = (
    "vector_length + lws_y",
    "y_component_number + threads_number",
    "elements_number",
    "load_overlap + temporary_size",
)


class ValueStepGreedy(GreedySearch):
    """GS whose neighbours differ by ±1 in a parameter's *value* (not its level): the
    hypothesis tested for the seeds' GS (power-of-two factors and temporary_size can then
    never move)."""

    name = "greedy-value"

    def _neighbours(self) -> np.ndarray:
        rows = []
        for j, p in enumerate(self.space.parameters):
            values = np.asarray(p.values_at(np.arange(p.n_levels)), dtype=float)
            here = values[int(self._current[j])]
            for step in (-1.0, 1.0):
                hit = np.flatnonzero(values == here + step)
                if len(hit):
                    row = self._current.copy()
                    row[j] = hit[0]
                    rows.append(row)
        rows_arr = np.asarray(rows).reshape(-1, self.space.dims)
        return rows_arr[self.space.valid_mask(rows_arr)] if len(rows_arr) else rows_arr


class DarwinningLikeGA(GeneticAlgorithm):
    """GA with both operators of BOAST's genetic optimizer (the ``darwinning`` gem, BOAST's
    fork): roulette selection (``selection="roulette"``, weights ``1/f``) and mutation of
    one random gene in 10% of the children instead of each gene with probability 0.1."""

    name = "genetic-darwinning"

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, selection="roulette", **options)

    def _mutate(self, genes: np.ndarray) -> np.ndarray:
        genes = genes.copy()
        if self.rng.random() < self.options.mutation:
            j = int(self.rng.integers(self.space.dims))
            genes[j] = self.rng.integers(self.space.parameters[j].n_levels)
        return genes


def _named(
    name: str, budget: int, **options: Any
) -> tuple[Callable[[Any, int], Strategy], int, dict]:
    return (
        (lambda space, seed: make_strategy(name, space, seed=seed, **options)),
        budget,
        {"strategy": name, **options},
    )


#: label -> (strategy factory, budget, description). Budgets as in seed 003 Table 11.3.
LAPLACIAN_METHODS: dict[str, tuple[Callable[[Any, int], Strategy], int, dict]] = {
    "RS": _named("random", 120),
    "LHS": _named("lhs", 125),
    "GS": _named("greedy", 120),
    "GSR": _named("greedy-restart", 120),
    "GA": _named("genetic", 120),
    "LM": _named("lm", 120, fix=SEED_000_SCHEDULE),
    "QR": _named("qr", 120, fix=SEED_000_SCHEDULE),
    "DLMT": _named("dlmt", 125, formula=LAPLACIAN_MODEL),
    # variants that explain the differences with the seeds
    "DLMT-max-fix-1": _named("dlmt", 125, formula=LAPLACIAN_MODEL, max_fix=1),
    "DLMT-max-fix-2": _named("dlmt", 125, formula=LAPLACIAN_MODEL, max_fix=2),
    "DLMT-boxcox": _named("dlmt", 125, formula=LAPLACIAN_MODEL, transform="boxcox"),
    "DLMT-seeds-schedule": _named("dlmt", 125, formula=LAPLACIAN_MODEL, fix=SEED_003_DLMT_SCHEDULE),
    "DLMT-confirm": _named("dlmt", 125, formula=LAPLACIAN_MODEL, confirm=True),
    "LM-pvalues": _named("lm", 120, formula=LAPLACIAN_MODEL, fix=(2, 1, 1, 1)),
    "GS-seeds": _named("greedy", 120, moved_ignores=("lws_y",)),
    "GPR-seeds": _named("gpr-seeds", 120, trend=LAPLACIAN_MODEL),
    "GA-roulette": _named("genetic", 120, selection="roulette"),
    "GS-value-step": (
        (lambda space, seed: ValueStepGreedy(space, seed=seed)),
        120,
        {"strategy": "greedy-value"},
    ),
    "GA-darwinning": (
        (lambda space, seed: DarwinningLikeGA(space, seed=seed)),
        120,
        {"strategy": "genetic-darwinning"},
    ),
    "LHS-125": _named("lhs", 125, samples=125),
    "SA": _named("annealing", 120),
    "two-stage": _named("two-stage", 120),
}

BITS_METHODS = {
    "RS": _named("random", 245),
    "LHS": _named("lhs", 245, samples=245),
    "GS": _named("greedy", 245),
    "GSR": _named("greedy-restart", 245),
    "GA": _named("genetic", 245),
    "SA": _named("annealing", 245),
    "LM": _named("lm", 245, samples=(120, 40, 40, 45), fix=(10, 10, 10, 10)),
    "QR": _named("qr", 245, samples=(120, 40, 40, 45), fix=(10, 10, 10, 10)),
    "DLMT": _named("dlmt", 245, significance=0.01),
    "two-stage": _named("two-stage", 245, samples=120),
}

_PROBLEM: dict[str, Any] = {}


def _problem(kind: str):
    if kind not in _PROBLEM:
        _PROBLEM[kind] = laplacian_replay() if kind == "laplacian" else ConstrainedBitsProblem()
    return _PROBLEM[kind]


def _final_value(problem, strategy: Strategy, result) -> float | None:
    """For the factor-fixing methods (lm, qr, dlmt): the best measurement inside the
    slice they end in — what the seeds report for LM/RQ ("the best of the 4 points
    left") and DLMT. None for the other methods."""
    subspace = getattr(strategy, "subspace", None)
    ok = [t for t in result.trials if t.ok]
    if subspace is None or not ok:
        return None
    inside = subspace.contains(problem.space.to_index([t.config for t in ok]))
    values = np.array([t.value for t in ok])[inside]
    return float(values.min()) if len(values) else None


def run_one(job: tuple[str, str, int]) -> dict[str, Any]:
    kind, label, rep = job
    methods = LAPLACIAN_METHODS if kind == "laplacian" else BITS_METHODS
    factory, budget, _ = methods[label]
    problem = _problem(kind)
    start = time.process_time()
    strategy = factory(problem.space, rep)
    result = tune(problem, strategy, budget, seed=rep)
    final = _final_value(problem, strategy, result)
    return {
        "method": label,
        "rep": rep,
        "budget": budget,
        "used": result.used,
        "best": result.best_value,
        "slowdown": result.best_value / problem.optimum,
        "final_slowdown": None if final is None else final / problem.optimum,
        "cpu_s": round(time.process_time() - start, 3),
    }


def run(kind: str, labels: list[str], reps: int, workers: int, first: int = 0) -> pd.DataFrame:
    jobs = [(kind, label, rep) for label in labels for rep in range(first, first + reps)]
    if workers > 1:
        with Pool(workers) as pool:
            rows = pool.map(run_one, jobs, chunksize=4)
    else:
        rows = [run_one(j) for j in jobs]
    return pd.DataFrame(rows)


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    g = runs.groupby("method", sort=False)
    table = g.agg(
        reps=("rep", "size"),
        mean=("slowdown", "mean"),
        min=("slowdown", "min"),
        max=("slowdown", "max"),
        budget_mean=("used", "mean"),
        budget_max=("used", "max"),
        cpu_s_per_rep=("cpu_s", "mean"),
    )
    table["final_mean"] = g["final_slowdown"].mean()
    table["final_max"] = g["final_slowdown"].max()
    return table


def seeds_table() -> pd.DataFrame:
    runs = pd.read_csv(find_data("laplacian-k40c/thesis_method_runs_1000.csv"))
    runs["method"] = runs["method"].replace({"RQ": "QR"})
    g = runs.groupby("method")
    return g.agg(
        reps=("slowdown", "size"),
        mean=("slowdown", "mean"),
        min=("slowdown", "min"),
        max=("slowdown", "max"),
        budget_mean=("point_number", "mean"),
        budget_max=("point_number", "max"),
    )


def comparison(ours: pd.DataFrame, seeds: pd.DataFrame) -> str:
    """Markdown table: our summary next to the seeds' per-run results (same method names)."""
    lines = [
        "| method | reps | mean | min | max | budget mean | budget max "
        "| seeds mean | seeds min | seeds max "
        "| seeds budget mean | seeds budget max | mean - seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, row in ours.iterrows():
        seed_row = seeds.loc[label] if label in seeds.index else None
        cells = [
            label,
            f"{row['reps']:.0f}",
            f"{row['mean']:.3f}",
            f"{row['min']:.3f}",
            f"{row['max']:.3f}",
            f"{row['budget_mean']:.1f}",
            f"{row['budget_max']:.0f}",
        ]
        if seed_row is not None:
            cells += [
                f"{seed_row['mean']:.3f}",
                f"{seed_row['min']:.3f}",
                f"{seed_row['max']:.3f}",
                f"{seed_row['budget_mean']:.1f}",
                f"{seed_row['budget_max']:.0f}",
                f"{row['mean'] - seed_row['mean']:+.3f}",
            ]
        else:
            cells += ["—"] * 6
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def figure(ours: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seeds = pd.read_csv(find_data("laplacian-k40c/thesis_method_runs_1000.csv"))
    seeds["method"] = seeds["method"].replace({"RQ": "QR"})
    labels = ["RS", "LHS", "GS", "GSR", "GA", "LM", "QR", "DLMT"]
    fig, axes = plt.subplots(len(labels), 1, figsize=(7, 1.6 * len(labels)), sharex=True)
    bins = np.linspace(1.0, 2.0, 51)
    for ax, label in zip(axes, labels, strict=True):
        a = np.clip(seeds.loc[seeds.method == label, "slowdown"], 1, 2)
        b = np.clip(ours.loc[ours.method == label, "slowdown"], 1, 2)
        ax.hist(a, bins=bins, density=True, alpha=0.5, label="seeds (1000 runs)")
        ax.hist(b, bins=bins, density=True, alpha=0.5, label=f"gpautotune ({len(b)} runs)")
        ax.set_ylabel(label, rotation=0, ha="right")
        ax.set_yticks([])
    axes[0].legend(fontsize=8)
    axes[-1].set_xlabel("slowdown vs the optimum (values above 2 shown at 2)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def dlmt_steps(reps: int) -> pd.DataFrame:
    """What the default DLMT decided at its first fixing step, per repetition."""
    problem = _problem("laplacian")
    rows = []
    for rep in range(reps):
        strategy = LAPLACIAN_METHODS["DLMT"][0](problem.space, rep)
        result = tune(problem, strategy, 125, seed=rep)
        first = next((d.fixed for d in strategy.decisions if d.fixed), {})
        rows.append(
            {
                "rep": rep,
                "slowdown": result.best_value / problem.optimum,
                "used": result.used,
                "nothing_significant_first": not strategy.decisions[0].fixed,
                "first_fixed": len(first),
                "elements_number_first": "elements_number" in first,
            }
        )
    frame = pd.DataFrame(rows)
    print(
        f"runs {len(frame)}; nothing significant at the first analysis: "
        f"{frame.nothing_significant_first.mean():.2f}"
    )
    by_en = frame.groupby("elements_number_first").agg(
        runs=("rep", "size"), mean=("slowdown", "mean")
    )
    print("elements_number fixed at the first fixing step:\n" + by_en.round(3).to_string())
    by_k = frame.groupby("first_fixed").agg(
        runs=("rep", "size"), mean=("slowdown", "mean"), used=("used", "mean")
    )
    print("factors fixed at the first fixing step:\n" + by_k.round(3).to_string())
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["time", "laplacian", "bits", "report", "dlmt-steps"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--first", type=int, default=0, help="first repetition (seed)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--methods", nargs="*", default=None)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.what == "dlmt-steps":
        dlmt_steps(args.reps).to_csv(OUT / "dlmt_first_step.csv", index=False, float_format="%.6g")
        return
    if args.what == "time":
        labels = args.methods or list(LAPLACIAN_METHODS)
        runs = run("laplacian", labels, args.reps, 1)
        print(runs.groupby("method", sort=False)["cpu_s"].mean().round(3).to_string())
        return
    if args.what in ("laplacian", "bits"):
        methods = LAPLACIAN_METHODS if args.what == "laplacian" else BITS_METHODS
        labels = args.methods or list(methods)
        start = time.time()
        runs = run(args.what, labels, args.reps, args.workers, args.first)
        target = OUT / f"{args.what}_runs.csv.gz"  # per-run rows, compressed
        if target.exists():
            old = pd.read_csv(target)
            old = old[
                ~old.set_index(["method", "rep"]).index.isin(
                    runs.set_index(["method", "rep"]).index
                )
            ]
            runs = pd.concat([old, runs], ignore_index=True)
        runs.to_csv(target, index=False, float_format="%.6g")
        print(f"{len(runs)} runs in {target} ({time.time() - start:.0f} s wall)")
        print(summarise(runs).round(3).to_string())
        return
    seeds = seeds_table().round(4)
    seeds.to_csv(OUT / "seeds_summary.csv")
    for kind in ("laplacian", "bits"):
        path = OUT / f"{kind}_runs.csv.gz"
        if path.exists():
            order = list(LAPLACIAN_METHODS if kind == "laplacian" else BITS_METHODS)
            table = summarise(pd.read_csv(path)).round(4)
            table = table.loc[[m for m in order if m in table.index]]
            table.to_csv(OUT / f"{kind}_summary.csv")
            print(kind, "\n", table.to_string())
            if kind == "laplacian":
                (OUT / "laplacian_table.md").write_text(comparison(table, seeds) + "\n")
                print(comparison(table, seeds))
    print("seeds\n", seeds.to_string())
    if (OUT / "laplacian_runs.csv.gz").exists():
        figure(pd.read_csv(OUT / "laplacian_runs.csv.gz"), OUT / "laplacian_slowdowns.png")


if __name__ == "__main__":
    main()
