"""SPAPT kernels: space sizes vs the specification, and random valid configurations measured.

For every kernel: the raw size (product of value-set sizes) against Appendix A of
``docs/spapt-kernels.md``, the exact valid size, then ``--per-kernel`` uniformly random
valid configurations measured at the ``small`` preset (compile, run, validate); each
ends ``ok`` or with a recorded failure status.

Usage (from the repository root)::

    PYTHONPATH=$PWD python benchmarks/spapt_sample.py --per-kernel 20 --seed 0
    PYTHONPATH=$PWD python benchmarks/spapt_sample.py --kernels bicg mm --per-kernel 5

Outputs under ``--out`` (default ``benchmarks/results/spapt``): ``sizes.csv``,
``sample.csv`` (one row per measured configuration; rows of re-run kernels are
replaced) and ``sample_summary.csv`` (counts by status, median compile and run time).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path

import pandas as pd

from gpautotune.problems.spapt import KERNEL_NAMES, SpaptProblem, list_kernels

APPENDIX_A = {  # raw sizes of the specification's Appendix A (adi: thesis value sets)
    "atax": 26547069911040000,
    "dgemv3": 3881681992353068561203200000000000000,
    "gemver": 25999348907114496000000,
    "gesummv": 5374771200,
    "hessian": 37324800,
    "mm": 1289945088000,
    "mvt": 1194393600,
    "tensor": 12036735605145600000,
    "trmm": 374390624262448742400000,
    "bicg": 322486272000,
    "lu": 9674588160000,
    "adi": 6051657497760000,
    "jacobi": 5374771200,
    "seidel": 139314069504000,
    "stencil3d": 9704204980882671403008000000,
    "correlation": 451377585192960000,
    "fdtd": 291126149426480142090240000000,
    "covariance": 53375619130243200000,
}
STATUSES = ("ok", "build_error", "timeout", "wrong_result", "run_error", "invalid")


def sizes_table() -> pd.DataFrame:
    rows = []
    for r in list_kernels():
        rows.append(
            {
                "kernel": r.name,
                "factors": r.factors,
                "raw_size": str(r.raw_size),
                "spec_raw_size": str(APPENDIX_A[r.name]),
                "raw_matches": r.raw_size == APPENDIX_A[r.name],
                "valid_size": f"{r.valid_size:.6g}",
                "valid_exact": r.valid_exact,
                "valid_percent": f"{100 * r.valid_fraction:.4g}",
                "table_12_1": r.table_12_1 or "",
            }
        )
    return pd.DataFrame(rows)


def measure_kernel(name: str, n: int, seed: int, args: argparse.Namespace) -> list[dict]:
    problem = SpaptProblem(
        name,
        compile_timeout_s=args.compile_timeout,
        run_timeout_s=args.run_timeout,
        cache_dir=args.cache_dir,
    )
    rows = []
    try:
        base = problem.baseline_record()
        for k, config in enumerate(problem.space.sample(n, method="random", seed=seed)):
            t0 = time.perf_counter()
            m = problem.evaluate(config)
            rows.append(
                {
                    "kernel": name,
                    "sample": k,
                    "status": str(m.status),
                    "time_s": m.value,
                    "speedup": m.metrics.get("speedup"),
                    "compile_s": m.metrics.get("compile_s"),
                    "run_s": m.metrics.get("run_s"),
                    "threads": m.metrics.get("omp_num_threads"),
                    "baseline_s": base.mean_s,
                    "wall_s": time.perf_counter() - t0,
                    "error": (m.error or "").strip().splitlines()[0][:200] if m.error else "",
                    "config": json.dumps(config, sort_keys=True),
                }
            )
            print(
                f"{name:12s} {k:3d} {m.status!s:13s} wall={rows[-1]['wall_s']:6.2f}s "
                f"speedup={m.metrics.get('speedup') or float('nan'):.3f}",
                flush=True,
            )
    finally:
        problem.close()
    return rows


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for name, g in frame.groupby("kernel", sort=False):
        row = {"kernel": name, "n": len(g)}
        row.update({s: int((g.status == s).sum()) for s in STATUSES})
        compiled = g.compile_s.dropna()
        ran = g[g.status.isin(["ok", "wrong_result"])].run_s.dropna()
        row["median_compile_s"] = round(statistics.median(compiled), 3) if len(compiled) else None
        row["median_run_s"] = round(statistics.median(ran), 3) if len(ran) else None
        row["max_speedup"] = round(g.speedup.max(), 3) if g.speedup.notna().any() else None
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", nargs="*", default=list(KERNEL_NAMES))
    parser.add_argument("--per-kernel", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile-timeout", type=float, default=60.0)
    parser.add_argument("--run-timeout", type=float, default=60.0)
    parser.add_argument("--cache-dir", default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/spapt"))
    parser.add_argument("--skip-sizes", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.skip_sizes:
        sizes = sizes_table()
        sizes.to_csv(args.out / "sizes.csv", index=False)
        print(sizes.to_string(index=False))
    path = args.out / "sample.csv"
    for name in args.kernels:  # saved after each kernel, so a killed run keeps what it measured
        rows = measure_kernel(name, args.per_kernel, args.seed, args)
        old = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["kernel"])
        frame = pd.concat([old[old.kernel != name], pd.DataFrame(rows)], ignore_index=True)
        order = {k: i for i, k in enumerate(KERNEL_NAMES)}
        frame = frame.sort_values(
            ["kernel", "sample"], key=lambda c: c.map(order) if c.name == "kernel" else c
        )
        frame.to_csv(path, index=False)
    summary = summarise(frame)
    summary.to_csv(args.out / "sample_summary.csv", index=False)
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
