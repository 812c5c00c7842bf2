"""Shared pieces of the Laplacian benchmark scripts (argument parsing, tables, baselines)."""

from __future__ import annotations

import argparse
import json
import platform as host_platform
import time
from pathlib import Path
from typing import Any

import pandas as pd

from gpautotune import tune
from gpautotune.execution import IsolatedEvaluator
from gpautotune.problems import Measurement
from gpautotune.problems.laplacian import K40C_OPTIMUM, NAIVE_CONFIG, LaplacianProblem
from gpautotune.trial import Trial

PARAMS = [
    "elements_number",
    "y_component_number",
    "vector_length",
    "temporary_size",
    "load_overlap",
    "threads_number",
    "lws_y",
]


def device_arguments(
    parser: argparse.ArgumentParser, sizes: str = "small", timeout: float = 60.0
) -> None:
    parser.add_argument("--platform", default=None, help="OpenCL platform name substring or index")
    parser.add_argument("--device", default=None, help="device name substring or index")
    parser.add_argument("--sizes", default=sizes, help="preset (small, thesis, tiny) or 'WxH,WxH'")
    parser.add_argument("--timeout", type=float, default=timeout, help="seconds per evaluation")


def problem_from(args: argparse.Namespace) -> LaplacianProblem:
    return LaplacianProblem(
        platform=args.platform, device=args.device, sizes=args.sizes, timeout_s=args.timeout
    )


def row(config: dict[str, Any], m: Measurement, **extra: Any) -> dict[str, Any]:
    """A compact table row (no source, no raw samples)."""
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


def trials_table(trials: list[Trial]) -> pd.DataFrame:
    return pd.DataFrame(
        [row(t.config, t.measurement, number=t.number, duration_s=t.duration_s) for t in trials]
    )


def environment(problem: LaplacianProblem) -> dict[str, Any]:
    d = problem.device_info
    return {
        "device": d.device,
        "platform": d.platform,
        "platform_version": d.platform_version,
        "driver_version": d.driver_version,
        "compute_units": d.compute_units,
        "sizes": [list(s) for s in problem.sizes],
        "repeats": problem.repeats,
        "host": host_platform.node(),
    }


def measure_configs(
    problem: LaplacianProblem, configs: dict[str, dict[str, Any]]
) -> dict[str, Measurement]:
    """Measure named configurations one after the other in one worker (one context)."""
    evaluator = IsolatedEvaluator(timeout_s=problem.timeout_s)
    try:
        return {name: evaluator(problem, config).measurement for name, config in configs.items()}
    finally:
        evaluator.close()


def tuning_run(
    problem: LaplacianProblem, strategy: str, budget: int, seed: int, out: Path
) -> dict[str, Any]:
    """One tuning run, then the naive kernel, the best found and the K40c optimum
    re-measured together."""
    t0 = time.perf_counter()
    result = tune(
        problem,
        strategy,
        budget,
        seed=seed,
        storage=out / f"tune_{strategy}_seed{seed}.db",
        evaluator=problem.default_evaluator(),
    )
    elapsed = time.perf_counter() - t0
    trials_table(result.trials).to_csv(out / f"tune_{strategy}_seed{seed}_trials.csv", index=False)
    summary: dict[str, Any] = {
        "strategy": strategy,
        "budget": budget,
        "seed": seed,
        "tuning_wall_s": elapsed,
        "status_counts": pd.Series([t.measurement.status.value for t in result.trials])
        .value_counts()
        .to_dict(),
    }
    if result.best is None:
        return summary
    best = dict(result.best_config)
    again = measure_configs(
        problem, {"naive": NAIVE_CONFIG, "best": best, "k40c_optimum": K40C_OPTIMUM}
    )
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
    naive, best_m = again["naive"], again["best"]
    if naive.ok and best_m.ok:
        summary["speedup_over_naive"] = naive.value / best_m.value
    summary["differs_from_k40c_optimum"] = {
        p: [best[p], K40C_OPTIMUM[p]] for p in PARAMS if best[p] != K40C_OPTIMUM[p]
    }
    return summary


def write_json(path: Path, payload: dict[str, Any]) -> None:
    path.write_text(json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
