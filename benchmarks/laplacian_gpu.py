"""Benchmark 4 (GPU): tune the Laplacian kernel on NVIDIA OpenCL with the seeds' image sizes.

For the lead's H100 machine. NVIDIA's OpenCL driver is not in the default ICD folder
there, so unless ``OCL_ICD_VENDORS`` is set this script writes an ``.icd`` file naming
``/usr/local/nvidia/lib64/libnvidia-opencl.so.1`` under /tmp and points
``OCL_ICD_VENDORS`` at it (before any OpenCL call). Then: a tuning run of ``--budget``
evaluations (thesis sizes, min of 4 runs per size, mean over sizes), and the naive
kernel, the best configuration and the K40c optimum (6,6,1,2,true,true,1024,2)
re-measured together in one worker, with the copy bandwidth of the same context.

    PYTHONPATH=. python benchmarks/laplacian_gpu.py OUT_DIR --strategy random --budget 120 --seed 0
    PYTHONPATH=. python benchmarks/laplacian_gpu.py OUT_DIR --strategy gpr --budget 120 --seed 0

Writes OUT_DIR/tune_<strategy>_seed<seed>.db (journal), ..._trials.csv,
gpu_<strategy>_seed<seed>.json and gpu_<strategy>_seed<seed>.md.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from gpautotune.problems.opencl import register_icd


def report(summary: dict[str, Any]) -> str:
    """A short markdown table of the run."""
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
    differences = summary.get("differs_from_k40c_optimum")
    lines += [
        "",
        f"best configuration (found at evaluation {summary.get('best_found_at')}): "
        f"`{summary.get('best_config')}`",
        f"speedup over the naive kernel: {speedup:.2f}",
        f"differences from the K40c optimum (best, K40c): {differences}",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    icd = (
        register_icd()
    )  # before the first OpenCL call of this process (and of the spawned workers)
    from laplacian_common import device_arguments, environment, problem_from, tuning_run, write_json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "out", type=Path, help="output folder (journal, trial CSV, JSON and markdown summaries)"
    )
    device_arguments(parser, sizes="thesis", timeout=120.0)
    parser.set_defaults(platform="nvidia")
    parser.add_argument(
        "--strategy", default="random", help="a registered strategy name (random, sobol, gpr, ...)"
    )
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    problem = problem_from(args)
    summary = tuning_run(problem, args.strategy, args.budget, args.seed, args.out)
    summary.update(environment=environment(problem), icd_folder=icd)
    stem = f"gpu_{args.strategy}_seed{args.seed}"
    write_json(args.out / f"{stem}.json", summary)
    text = report(summary)
    (args.out / f"{stem}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    main()
