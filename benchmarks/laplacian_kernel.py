"""The Laplacian OpenCL kernel measured on a real device: validity, noise, tuning runs.

Measurements on an OpenCL device, which a comparison on a replay cannot make: the
re-measurement of the naive kernel, the best found and the K40c optimum together in one
worker after a tuning run, the noise of repeated measurements, and the check that random
valid configurations build, run and match the reference. Subcommands::

    # 1. random valid configurations each match the reference or fail with a status
    python benchmarks/laplacian_kernel.py validity --n 200 --seed 0 --out OUT
    # 2. noise of the same configurations over rounds, and whether min-of-4 ranks them
    python benchmarks/laplacian_kernel.py noise --configs 20 --rounds 5 --out OUT
    # 3. tuning runs on this machine's device, then the three kernels re-measured
    python benchmarks/laplacian_kernel.py tune --strategy gpr --budget 60 --seeds 0 1 2 --out OUT
    # 4. the same on an NVIDIA GPU with the seeds' image sizes, with a Markdown summary
    python benchmarks/laplacian_kernel.py gpu OUT --strategy gpr --budget 120 --seed 0

``--platform``/``--device`` pick the OpenCL device (name substring or index). Unless
``OCL_ICD_VENDORS`` is set, an ``.icd`` folder naming NVIDIA's driver is written first
where that driver exists (:func:`gpautotune.problems.opencl.register_icd`). Writes
``validity.csv/json``, ``noise.csv/json``, ``tune_<strategy>.json`` (``tune``) or
``gpu_<strategy>_seed<seed>.json/md`` (``gpu``), and per run its journal
``tune_<strategy>_seed<seed>.db`` and ``..._trials.csv``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import platform as host_platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpautotune.problems.opencl import register_icd

PARAMS = [
    "elements_number",
    "y_component_number",
    "vector_length",
    "temporary_size",
    "load_overlap",
    "threads_number",
    "lws_y",
]


def row(config: dict[str, Any], m: Any, **extra: Any) -> dict[str, Any]:
    """A compact table row of a measurement (no source, no raw samples)."""
    out = {p: config.get(p) for p in PARAMS}
    out.update(
        status=m.status.value,
        value=m.value,
        bound_fraction=m.metrics.get("bound_fraction"),
        build_time_s=m.metrics.get("build_time_s"),
        error=(m.error or "").strip().splitlines()[0][:160] if m.error else "",
        **extra,
    )
    return out


def environment(problem: Any) -> dict[str, Any]:
    """The problem's description (device, driver, sizes, repeats) and the host."""
    d = problem.device_info
    return {
        **problem.describe(),
        "platform_version": d.platform_version,
        "compute_units": d.compute_units,
        "host": host_platform.node(),
    }


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")


def problem_from(args: argparse.Namespace) -> Any:
    from gpautotune.problems.laplacian import LaplacianProblem

    return LaplacianProblem(
        platform=args.platform, device=args.device, sizes=args.sizes, timeout_s=args.timeout
    )


def validity(args: argparse.Namespace) -> None:
    from gpautotune.execution import IsolatedEvaluator

    problem = problem_from(args)
    configs = problem.space.sample(args.n, method="random", seed=args.seed)
    evaluator = IsolatedEvaluator(timeout_s=problem.timeout_s)
    rows, t0 = [], time.perf_counter()
    try:
        for config in configs:
            ev = evaluator(problem, config)
            rows.append(row(config, ev.measurement, duration_s=ev.duration_s))
    finally:
        evaluator.close()
    table = pd.DataFrame(rows)
    table.to_csv(args.out / "validity.csv", index=False)
    counts = table["status"].value_counts().to_dict()
    summary = {
        "n": len(table),
        "seed": args.seed,
        "status_counts": counts,
        "wall_s": time.perf_counter() - t0,
        "workers_started": evaluator.workers_started,
        "environment": environment(problem),
        "ok_value_s_per_pixel": table.loc[table.status == "ok", "value"].describe().to_dict(),
    }
    write_json(args.out / "validity.json", summary)
    print(counts)


def measure_rounds(problem: Any, configs: list[dict], rounds: int, seed: int) -> pd.DataFrame:
    """Every configuration measured once per round, in a shuffled order, in one worker."""
    from gpautotune.execution import IsolatedEvaluator

    rng = np.random.default_rng(seed)
    evaluator, rows = IsolatedEvaluator(timeout_s=problem.timeout_s), []
    try:
        for r in range(rounds):
            for i in rng.permutation(len(configs)):
                m = evaluator(problem, configs[i]).measurement
                per_size = [np.asarray(t) for t in m.metrics.get("kernel_times_s", [])]
                cv = float(np.mean([t.std() / t.mean() for t in per_size])) if m.ok else None
                rows.append(
                    {
                        "round": r,
                        "config": int(i),
                        "status": m.status.value,
                        "value": m.value,
                        "sample_cv": cv,
                        **{p: configs[i][p] for p in PARAMS},
                    }
                )
    finally:
        evaluator.close()
    return pd.DataFrame(rows)


def noise_summary(table: pd.DataFrame) -> dict[str, Any]:
    """CV across rounds, the 4 timed runs' CV, Kendall tau between rounds, stable pairs."""
    from scipy.stats import kendalltau

    ok = table[table.status == "ok"]
    wide = ok.pivot(index="config", columns="round", values="value").dropna()
    cv = wide.std(axis=1, ddof=1) / wide.mean(axis=1)
    taus = [
        kendalltau(wide[a], wide[b]).statistic for a, b in itertools.combinations(wide.columns, 2)
    ]
    ranks = wide.rank(axis=0)
    first = ranks.iloc[:, 0]
    same = [
        bool(np.all(np.sign(ranks.loc[a] - ranks.loc[b]) == np.sign(first[a] - first[b])))
        for a, b in itertools.combinations(wide.index, 2)
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


def noise(args: argparse.Namespace) -> None:
    problem = problem_from(args)
    configs = problem.space.sample(args.configs, method="random", seed=args.seed)
    table = measure_rounds(problem, configs, args.rounds, args.seed)
    table.to_csv(args.out / "noise.csv", index=False)
    summary = {**noise_summary(table), "environment": environment(problem)}
    write_json(args.out / "noise.json", summary)
    print({k: v for k, v in summary.items() if k != "environment"})


def remeasure(problem: Any, configs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Measure named configurations one after the other in one worker (one context)."""
    from gpautotune.execution import IsolatedEvaluator

    evaluator = IsolatedEvaluator(timeout_s=problem.timeout_s)
    try:
        return {name: evaluator(problem, config).measurement for name, config in configs.items()}
    finally:
        evaluator.close()


def tuning_run(problem: Any, strategy: str, budget: int, seed: int, out: Path) -> dict[str, Any]:
    """One tuning run, then the naive kernel, the best found and the K40c optimum
    re-measured together."""
    from gpautotune import tune
    from gpautotune.problems.laplacian import K40C_OPTIMUM, NAIVE_CONFIG

    t0 = time.perf_counter()
    stem = f"tune_{strategy}_seed{seed}"
    result = tune(
        problem,
        strategy,
        budget,
        seed=seed,
        storage=out / f"{stem}.db",
        evaluator=problem.default_evaluator(),
    )
    elapsed = time.perf_counter() - t0
    trials = [
        row(t.config, t.measurement, number=t.number, duration_s=t.duration_s)
        for t in result.trials
    ]
    pd.DataFrame(trials).to_csv(out / f"{stem}_trials.csv", index=False)
    statuses = pd.Series([t.measurement.status.value for t in result.trials])
    summary: dict[str, Any] = {
        "strategy": strategy,
        "budget": budget,
        "seed": seed,
        "tuning_wall_s": elapsed,
        "status_counts": statuses.value_counts().to_dict(),
    }
    if result.best is None:
        return summary
    best = dict(result.best_config)
    again = remeasure(problem, {"naive": NAIVE_CONFIG, "best": best, "k40c_optimum": K40C_OPTIMUM})
    summary.update(
        best_config=best,
        best_value_during_run=result.best_value,
        best_found_at=result.best.number + 1,
        remeasured={
            name: {
                "status": m.status.value,
                "value": m.value,
                "bound_fraction": m.metrics.get("bound_fraction"),
                "copy_bandwidth_Bps": m.metrics.get("copy_bandwidth_Bps"),
            }
            for name, m in again.items()
        },
    )
    if again["naive"].ok and again["best"].ok:
        summary["speedup_over_naive"] = again["naive"].value / again["best"].value
    summary["differs_from_k40c_optimum"] = {
        p: [best[p], K40C_OPTIMUM[p]] for p in PARAMS if best[p] != K40C_OPTIMUM[p]
    }
    return summary


def tune_runs(args: argparse.Namespace) -> None:
    problem = problem_from(args)
    runs = [tuning_run(problem, args.strategy, args.budget, seed, args.out) for seed in args.seeds]
    payload = {"runs": runs, "environment": environment(problem)}
    write_json(args.out / f"tune_{args.strategy}.json", payload)
    for r in runs:
        print(r["seed"], r.get("remeasured", {}).get("best"), r.get("speedup_over_naive"))


def gpu_report(summary: dict[str, Any]) -> str:
    """A short Markdown summary of a GPU run."""
    env, again = summary["environment"], summary.get("remeasured", {})
    lines = [
        f"# Laplacian on {env['device']} ({env['platform']}, driver {env['driver_version']})",
        "",
        f"strategy `{summary['strategy']}`, budget {summary['budget']}, "
        f"seed {summary['seed']}, sizes {env['sizes']},"
        f" tuning wall time {summary['tuning_wall_s']:.0f} s, statuses {summary['status_counts']}",
        "",
        "| kernel | time per pixel (ps) | fraction of the 6 B/pixel copy bound "
        "| copy bandwidth (GB/s) |",
        "|---|---|---|---|",
    ]
    for name, m in again.items():
        value = "n/a" if m["value"] is None else f"{m['value'] * 1e12:.2f}"
        frac = "n/a" if m["bound_fraction"] is None else f"{m['bound_fraction']:.3f}"
        bw = "n/a" if m["copy_bandwidth_Bps"] is None else f"{m['copy_bandwidth_Bps'] / 1e9:.0f}"
        lines.append(f"| {name} | {value} | {frac} | {bw} |")
    speedup = summary.get("speedup_over_naive", float("nan"))
    lines += [
        "",
        f"best configuration (found at evaluation {summary.get('best_found_at')}): "
        f"`{summary.get('best_config')}`",
        f"speedup over the naive kernel: {speedup:.2f}",
        "differences from the K40c optimum (best, K40c): "
        f"{summary.get('differs_from_k40c_optimum')}",
        "",
    ]
    return "\n".join(lines)


def gpu(args: argparse.Namespace) -> None:
    problem = problem_from(args)
    summary = tuning_run(problem, args.strategy, args.budget, args.seed, args.out)
    summary.update(environment=environment(problem), icd_folder=args.icd)
    stem = f"gpu_{args.strategy}_seed{args.seed}"
    write_json(args.out / f"{stem}.json", summary)
    text = gpu_report(summary)
    (args.out / f"{stem}.md").write_text(text)
    print(text)


def _device_options(parser: argparse.ArgumentParser, sizes: str, timeout: float) -> None:
    parser.add_argument("--platform", default=None, help="OpenCL platform name substring or index")
    parser.add_argument("--device", default=None, help="device name substring or index")
    parser.add_argument("--sizes", default=sizes, help="preset (small, thesis, tiny) or 'WxH,WxH'")
    parser.add_argument("--timeout", type=float, default=timeout, help="seconds per evaluation")


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    default_out = Path("benchmarks/results/laplacian")
    for name, run, text in (
        ("validity", validity, "random valid configurations against the reference"),
        ("noise", noise, "noise of repeated measurements"),
        ("tune", tune_runs, "tuning runs on this machine's device"),
    ):
        sub = commands.add_parser(name, help=text)
        _device_options(sub, "small", 60.0)
        sub.add_argument("--out", type=Path, default=default_out)
        sub.set_defaults(run=run)
    validity_p, noise_p, tune_p = (commands.choices[n] for n in ("validity", "noise", "tune"))
    validity_p.add_argument("--n", type=int, default=200)
    validity_p.add_argument("--seed", type=int, default=0)
    noise_p.add_argument("--configs", type=int, default=20)
    noise_p.add_argument("--rounds", type=int, default=5)
    noise_p.add_argument("--seed", type=int, default=1)
    for sub in (tune_p, gpu_p := commands.add_parser("gpu", help="a tuning run on an NVIDIA GPU")):
        sub.add_argument("--strategy", default="random", help="a registered strategy name")
    tune_p.add_argument("--budget", type=int, default=60)
    tune_p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    gpu_p.add_argument("out", type=Path, help="output folder (journal, trials, JSON, Markdown)")
    _device_options(gpu_p, "thesis", 120.0)
    gpu_p.set_defaults(platform="nvidia", run=gpu)
    gpu_p.add_argument("--budget", type=int, default=120)
    gpu_p.add_argument("--seed", type=int, default=0)
    return main


def main() -> None:
    icd = register_icd()  # before the first OpenCL call of this process and its workers
    args = parser().parse_args()
    args.icd = icd
    logging.basicConfig(
        level=logging.INFO if args.command == "gpu" else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
    )
    args.out.mkdir(parents=True, exist_ok=True)
    args.run(args)


if __name__ == "__main__":
    main()
