"""Sobol sensitivity benchmarks (issue 7): validation, the Laplacian, screen-then-tune.

Run (from the repository root, PYTHONPATH=$PWD):
  python benchmarks/sensitivity.py validation --designs 5
  python benchmarks/sensitivity.py misfit [--restarts 0]
  python benchmarks/sensitivity.py laplacian [--subsample 1500]
  gpautotune compare benchmarks/gpr-bits.yaml --only screen-none-b128 --only screen-0.02-b128
  python benchmarks/sensitivity.py screening [--journal results/gpr-bits.db]
  python benchmarks/sensitivity.py coverage --points 64 245

Results go to benchmarks/results/sensitivity/ (CSV, PNG); each command prints the
Markdown tables of docs/benchmarks/sensitivity.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "sensitivity"
sys.path.insert(0, str(ROOT))

from gpautotune.sensitivity.reference_functions import (  # noqa: E402 - exact indices
    g_function,
    g_space,
    g_truth,
    ishigami,
    ishigami_space,
    ishigami_truth,
)


def _md(frame: pd.DataFrame, index: bool = True) -> str:
    """A Markdown table (no tabulate dependency)."""
    frame = frame.reset_index() if index else frame
    fmt = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in frame.to_numpy().ravel()]
    cells = np.array(fmt, dtype=object).reshape(frame.shape)
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|---" * frame.shape[1] + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def _compare(table: pd.DataFrame, s1: np.ndarray, st: np.ndarray, **labels) -> pd.DataFrame:
    out = table[["parameter", "S1", "S1_low", "S1_high", "ST", "ST_low", "ST_high"]].copy()
    out["S1_true"], out["ST_true"] = s1, st
    out["S1_in"] = (out.S1_low <= s1) & (s1 <= out.S1_high)
    out["ST_in"] = (out.ST_low <= st) & (st <= out.ST_high)
    for k, v in labels.items():
        out[k] = v
    return out


# ------------------------------------------------------------------ validation
def validation(args: argparse.Namespace) -> None:
    from gpautotune.analysis import sobol_indices, surrogate_indices
    from gpautotune.space._sampling import unit_sample
    from gpautotune.surrogate import GPSettings, GPSurrogate

    cases = {
        "ishigami": (ishigami_space(), ishigami, ishigami_truth()[:2]),
        "g-function": (g_space(), g_function, g_truth()),
    }
    rows = []
    for name, (space, make, (s1, st)) in cases.items():
        f = make(space)
        for domain in ("box", "valid"):
            t0 = time.perf_counter()
            r = sobol_indices(f, space, n=4096, domain=domain, seed=0)
            rows.append(
                _compare(
                    r.table,
                    s1,
                    st,
                    function=name,
                    source=f"exact function, {domain}",
                    design=-1,
                    seconds=time.perf_counter() - t0,
                    evaluations=r.evaluations,
                )
            )
        if name == "g-function":
            grid, (g1, gt) = g_space(32), g_truth(32)
            r = sobol_indices(g_function(grid), grid, n=4096, seed=0)
            rows.append(
                _compare(
                    r.table,
                    g1,
                    gt,
                    function=name,
                    source="exact function, 32-level grid, box",
                    design=-1,
                    seconds=0.0,
                    evaluations=r.evaluations,
                )
            )
        for design in range(args.designs):
            X = unit_sample("sobol", space.dims, 200, seed=100 + design)[:200]  # 256 drawn
            gp = GPSurrogate(GPSettings(log_transform=False, restarts=0), space.dims, 0)
            gp.fit(space.encode(X), f(X), seed=design)
            for hyper in ("fitted", "laplace"):
                t0 = time.perf_counter()
                r = surrogate_indices(
                    gp, space.encode, space, n=1024, paths=32, seed=design, hyperparameters=hyper
                )
                rows.append(
                    _compare(
                        r.table,
                        s1,
                        st,
                        function=name,
                        source=f"GP 200 points, {hyper}",
                        design=design,
                        seconds=time.perf_counter() - t0,
                        evaluations=r.evaluations,
                    )
                )
            print(f"{name} design {design} done", flush=True)
    frame = pd.concat(rows, ignore_index=True)
    OUT.mkdir(parents=True, exist_ok=True)
    frame.to_csv(OUT / "validation.csv", index=False)
    exact = frame[frame.design < 0]
    print(
        "\n| function | source | parameter | S1 true | S1 [95%] | ST true | ST [95%] |"
        "\n|---|---|---|---|---|---|---|"
    )
    for r in exact.itertuples():
        print(
            f"| {r.function} | {r.source} | {r.parameter} "
            f"| {r.S1_true:.3f} | {r.S1:.3f} [{r.S1_low:.3f}, "
            f"{r.S1_high:.3f}] | {r.ST_true:.3f} | {r.ST:.3f} [{r.ST_low:.3f}, {r.ST_high:.3f}] |"
        )
    gp = frame[frame.design >= 0]
    summary = gp.groupby(["function", "source"]).agg(
        designs=("design", "nunique"),
        S1_coverage=("S1_in", "mean"),
        ST_coverage=("ST_in", "mean"),
        ST_width=("ST_high", "mean"),
        seconds=("seconds", "mean"),
    )
    summary["ST_width"] = (
        gp.assign(w=gp.ST_high - gp.ST_low).groupby(["function", "source"])["w"].mean()
    )
    print("\n" + _md(summary))
    big = gp[gp.ST_true > 0.02].groupby(["function", "source"])[["S1_in", "ST_in"]].mean()
    print("\nindices with ST > 0.02 only:\n" + _md(big))


def misfit(args: argparse.Namespace) -> None:
    """One 200-point Ishigami design (Sobol seed 1) on which maximum likelihood explains
    the x1·x3⁴ interaction as noise: what the intervals say then."""
    from gpautotune.analysis import surrogate_indices
    from gpautotune.space._sampling import unit_sample
    from gpautotune.surrogate import GPSettings, GPSurrogate

    space = ishigami_space()
    X = unit_sample("sobol", 3, 200, seed=1)[:200]
    gp = GPSurrogate(GPSettings(log_transform=False, restarts=args.restarts), 3, 0)
    report = gp.fit(space.encode(X), ishigami(space)(X), seed=1)
    print(f"length-scales {report.lengthscales}, noise {report.noise:.3g}")
    for hyper in ("fitted", "laplace"):
        t = surrogate_indices(
            gp, space.encode, space, n=1024, paths=32, seed=1, hyperparameters=hyper
        ).table
        cells = [
            f"{r.parameter}: ST {r.ST:.3f} [{r.ST_low:.3f}, {r.ST_high:.3f}]"
            for r in t.itertuples()
        ]
        print(f"{hyper}: " + "; ".join(cells))


# ------------------------------------------------------------------- laplacian
SEEDS_ANOVA = ["vector_length", "lws_y", "y_component_number", "elements_number", "threads_number"]


def laplacian(args: argparse.Namespace) -> None:
    from gpautotune.analysis import sobol_indices, strategy_indices
    from gpautotune.analysis.explain import explain_run
    from gpautotune.problems import laplacian_replay
    from gpautotune.strategies import make_strategy
    from gpautotune.tuner import tune

    problem = laplacian_replay()
    space = problem.space
    OUT.mkdir(parents=True, exist_ok=True)
    db = OUT / "laplacian_gpr120.db"
    t0 = time.perf_counter()
    result = tune(problem, "gpr", 120, seed=0, storage=db)
    print(
        f"GPR run {result.run_id}: best {result.best_value:.4g} (optimum {problem.optimum:.4g}), "
        f"{time.perf_counter() - t0:.0f} s (0 if resumed)"
    )
    tables = {}
    for domain, n in (("box", 1024), ("valid", 4096)):
        t0 = time.perf_counter()
        table, png = explain_run(db, result.run_id, out_dir=OUT, domain=domain, n=n, paths=32)
        tables[f"GPR run, 120 points, {domain}"] = table
        print(f"explain {domain}: {time.perf_counter() - t0:.1f} s, {png}")
    # The measured table itself: every valid configuration, log time (the GP's scale).
    valid = space.enumerate_index()
    keys = space.row_keys(valid)
    lookup = dict(
        zip(space.row_keys(problem._index).tolist(), np.log(problem._values).tolist(), strict=True)
    )
    measured = np.array([k in lookup for k in keys.tolist()])
    print(f"{measured.sum()} of {len(valid)} valid configurations measured")

    def log_time(index: np.ndarray) -> np.ndarray:
        return np.array([lookup.get(k, np.nan) for k in space.row_keys(index).tolist()])

    t0 = time.perf_counter()
    full = sobol_indices(log_time, space, domain="valid", n=len(valid) + 1, bootstrap=0)
    tables["measured table, all valid rows, valid"] = full.table
    print(f"table decomposition: {time.perf_counter() - t0:.1f} s; {full.method}")
    # A GP fitted to a random subsample of the table (an exact GP on all 23,100 rows is
    # out of reach on 2 cores: 23k x 23k Cholesky).
    rng = np.random.default_rng(0)
    rows = valid[rng.choice(len(valid), size=args.subsample, replace=False)]
    strategy = make_strategy("gpr", space, seed=0, restarts=0)
    t0 = time.perf_counter()
    strategy.gp.fit(strategy.features(rows), np.exp(log_time(rows)), seed=0)
    fit_s = time.perf_counter() - t0
    for domain, n in (("box", 1024), ("valid", 4096)):
        t0 = time.perf_counter()
        r = strategy_indices(strategy, domain=domain, n=n, paths=16)
        tables[f"GP on {args.subsample} table rows, {domain}"] = r.table
        print(f"subsample GP ({fit_s:.0f} s fit) {domain}: {time.perf_counter() - t0:.1f} s")
    frames = [t.assign(source=k) for k, t in tables.items()]
    frame = pd.concat(frames, ignore_index=True)
    frame.to_csv(OUT / "laplacian.csv", index=False)
    order = full.table.sort_values("ST", ascending=False)["parameter"].tolist()
    print(
        "\nST (95% interval); parameters by ST of the measured table; "
        "* = significant in the seeds' ANOVA"
    )
    print("| source | " + " | ".join(f"{p}{'*' if p in SEEDS_ANOVA else ''}" for p in order) + " |")
    print("|---" * (len(order) + 1) + "|")
    for source, t in tables.items():
        t = t.set_index("parameter")
        cells = [
            f"{t.at[p, 'ST']:.3f} [{t.at[p, 'ST_low']:.3f}, {t.at[p, 'ST_high']:.3f}]"
            for p in order
        ]
        print(f"| {source} | " + " | ".join(cells) + " |")
    print("\nS1 (95% interval)")
    for source, t in tables.items():
        t = t.set_index("parameter")
        cells = [
            f"{t.at[p, 'S1']:.3f} [{t.at[p, 'S1_low']:.3f}, {t.at[p, 'S1_high']:.3f}]"
            for p in order
        ]
        print(f"| {source} | " + " | ".join(cells) + " |")


# ------------------------------------------------------------------- screening
def _screen_row(run: object, trials: list, optimum_bits: dict, n_init: int) -> dict:
    """One screen-then-tune run: its best, its initial design's best, the factors its
    screening fixed and how many of those are off the optimum's level."""
    values = np.array([t.value if t.ok else np.inf for t in trials])
    fixed = next((t.info["screened"] for t in trials if "screened" in t.info), {})
    return {
        "seed": run.seed,
        "budget": run.budget,
        "screen": run.label,
        "best": float(values.min()),
        "best_at_init": float(values[:n_init].min()),
        "n_fixed": len(fixed),
        "fixed_off_optimum": sum(v != optimum_bits[k] for k, v in fixed.items()),
        "wall_s": (run.finished_at or run.started_at) - run.started_at,
    }


def screening(args: argparse.Namespace) -> None:
    """The screen-then-tune runs of a comparison journal (``gpautotune compare
    benchmarks/gpr-bits.yaml``), per label: best loss, factors fixed and how many of them
    are not at the optimum's level (from the ``screened`` decision the runs record)."""
    from gpautotune.problems.synthetic import ConstrainedBitsProblem
    from gpautotune.storage import Journal

    problem = ConstrainedBitsProblem()
    optimum_bits = problem.best_known()
    rows = []
    with Journal(args.journal, read_only=True) as journal:
        for run in journal.runs():
            if run.label in args.labels and run.status == "finished":
                rows.append(_screen_row(run, journal.trials(run.id), optimum_bits, args.n_init))
    if not rows:
        raise SystemExit(f"no finished run labelled {args.labels} in {args.journal}")
    frame = pd.DataFrame(rows).assign(optimum=problem.optimum).sort_values(["screen", "seed"])
    OUT.mkdir(parents=True, exist_ok=True)
    frame.to_csv(OUT / "screening.csv", index=False)
    print(_md(frame, index=False))
    summary = frame.groupby(["budget", "screen"]).agg(
        seeds=("seed", "nunique"),
        mean_best=("best", "mean"),
        sd_best=("best", "std"),
        mean_fixed=("n_fixed", "mean"),
        fixed_off_optimum=("fixed_off_optimum", "mean"),
        wall_s=("wall_s", "mean"),
    )
    print("\n" + _md(summary))


# -------------------------------------------------------------------- coverage
def coverage(args: argparse.Namespace) -> None:
    """GP indices of the 54-factor problem vs its exact box indices, after k points."""
    from gpautotune.analysis import sobol_indices, strategy_indices
    from gpautotune.problems.synthetic import ConstrainedBitsProblem
    from gpautotune.space._sampling import sample_index
    from gpautotune.strategies import make_strategy

    problem = ConstrainedBitsProblem()
    space = problem.space

    def log_loss(index: np.ndarray) -> np.ndarray:
        return np.log(problem._loss(index + 1))  # levels 1..8 are indices 0..7

    exact = sobol_indices(log_loss, space, n=4096, bootstrap=50).table
    rows = []
    for points in args.points:
        strategy = make_strategy("gpr", space, seed=0, n_init=64)
        index = sample_index(space, points, seed=0)
        strategy.gp.fit(strategy.features(index), np.exp(log_loss(index)), seed=0)
        for trend, hyper in ((False, "fitted"), (True, "fitted"), (True, "laplace")):
            t0 = time.perf_counter()
            t = strategy_indices(
                strategy, n=256, paths=16, bootstrap=50, bayesian_trend=trend, hyperparameters=hyper
            ).table
            c = _compare(
                t,
                exact["S1"].to_numpy(),
                exact["ST"].to_numpy(),
                points=points,
                paths=f"trend {'drawn' if trend else 'fitted'}, kernel {hyper}",
                seconds=time.perf_counter() - t0,
            )
            rows.append(c)
    frame = pd.concat(rows, ignore_index=True)
    OUT.mkdir(parents=True, exist_ok=True)
    frame.to_csv(OUT / "coverage_bits.csv", index=False)
    frame["ST_width"] = frame.ST_high - frame.ST_low
    top = frame[frame.ST_true >= frame.ST_true.quantile(0.75)]
    summary = frame.groupby(["points", "paths"]).agg(
        S1_coverage=("S1_in", "mean"),
        ST_coverage=("ST_in", "mean"),
        ST_width=("ST_width", "mean"),
        seconds=("seconds", "mean"),
    )
    summary["ST_coverage_top_quarter"] = top.groupby(["points", "paths"])["ST_in"].mean()
    rank = frame.groupby(["points", "paths"]).apply(
        lambda g: g[["ST", "ST_true"]].corr(method="spearman").iloc[0, 1], include_groups=False
    )
    summary["spearman_ST"] = rank
    print(_md(summary))


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validation")
    v.add_argument("--designs", type=int, default=5)
    m = sub.add_parser("misfit")
    m.add_argument("--restarts", type=int, default=0)
    lap = sub.add_parser("laplacian")
    lap.add_argument("--subsample", type=int, default=1500)
    s = sub.add_parser("screening")
    s.add_argument("--journal", type=Path, default=Path("results/gpr-bits.db"))
    s.add_argument("--labels", nargs="+", default=["screen-none-b128", "screen-0.02-b128"])
    s.add_argument("--n-init", type=int, default=64, help="the runs' initial design size")
    c = sub.add_parser("coverage")
    c.add_argument("--points", type=int, nargs="+", default=[64, 245])
    args = parser.parse_args()
    commands = {
        "validation": validation,
        "misfit": misfit,
        "laplacian": laplacian,
        "screening": screening,
        "coverage": coverage,
    }
    commands[args.command](args)


if __name__ == "__main__":
    main()
