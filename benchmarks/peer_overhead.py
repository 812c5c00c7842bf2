"""Time per run and per proposal of each peer adapter and of our GPR, on a replay.

Each strategy tunes the problem once per seed with the run's whole budget; the time spent
in ``ask`` and ``tell`` (everything but the replayed evaluation, which takes
microseconds) is measured as wall time and as this process's CPU time, which Kernel
Tuner's strategy thread is part of. CPU time is the figure to plan with on a shared
machine; torch and BLAS are kept to one thread, as in the comparison's Dask workers.
Kernel Tuner's search space is built once per process and cached (as in a comparison's
workers); it is built before the timing starts.

Run::

    python benchmarks/peer_overhead.py --budget 120 --seeds 1 --out overhead.csv
    python benchmarks/peer_overhead.py --strategies gpr smac-bb --seeds 1 2
    python benchmarks/peer_overhead.py --strategies optuna-tpe:infeasible=constraint
    python benchmarks/peer_overhead.py --problem kt-caches/gemm/RTX_3090.json.gz

The problem is the K40c Laplacian table (default) or a Kernel Tuner cache (``--problem``,
a path under shared/data, as in configs/peers-kt-caches.yaml).

The table is printed in Markdown; ``--out`` also writes one CSV row per run.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import pandas as pd  # noqa: E402

from gpautotune.problems import Problem, laplacian_replay  # noqa: E402
from gpautotune.problems.kt_cache import kt_cache_problem  # noqa: E402
from gpautotune.strategies.peers import PEER_STRATEGIES  # noqa: E402
from gpautotune.tuner import TuningRun  # noqa: E402

#: Options of the comparison files (configs/peers-*.yaml).
OPTIONS: dict[str, dict[str, Any]] = {"optuna-gp": {"infeasible": "constraint"}}


def _parse(label: str) -> tuple[str, dict[str, Any]]:
    """``name`` or ``name:key=value,key=value`` (string values)."""
    name, _, rest = label.partition(":")
    options = dict(OPTIONS.get(name, {}))
    options.update(dict(kv.split("=", 1) for kv in rest.split(",") if kv))
    return name, options


def one_run(problem: Problem, label: str, seed: int, budget: int) -> dict[str, Any]:
    """Tune once; the strategy's own wall and CPU time (ask + tell), evaluations used."""
    name, options = _parse(label)
    wall = cpu = 0.0
    w0, c0 = time.perf_counter(), time.process_time()
    run = TuningRun(problem, name, seed=seed, budget=budget, strategy_options=options)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    try:
        while run.remaining:
            w0, c0 = time.perf_counter(), time.process_time()
            configs = run.ask()
            wall, cpu = wall + time.perf_counter() - w0, cpu + time.process_time() - c0
            if not configs:
                break
            measurement = problem.evaluate(configs[0])
            w0, c0 = time.perf_counter(), time.process_time()
            run.tell(configs[0], measurement)
            wall, cpu = wall + time.perf_counter() - w0, cpu + time.process_time() - c0
    finally:
        run.strategy.close()
    best = run.best.value / problem.optimum if run.best else float("nan")
    return {"strategy": label, "seed": seed, "used": run.used, "wall_s": wall, "cpu_s": cpu,
            "best_slowdown": best}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategies", nargs="+", default=["gpr", *PEER_STRATEGIES])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--budget", type=int, default=120)
    parser.add_argument("--problem", default=None, help="a kt cache (default: K40c table)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    problem = kt_cache_problem(args.problem) if args.problem else laplacian_replay()
    if any(n.startswith("kt-") for n in args.strategies):
        from gpautotune.strategies.peers._kernel_tuner import kernel_tuner_searchspace

        kernel_tuner_searchspace(problem.space)
    rows = []
    print("| strategy | runs | evaluations | CPU s/run | wall s/run | CPU ms/proposal |")
    print("|---|---|---|---|---|---|")
    for name in args.strategies:
        runs = pd.DataFrame([one_run(problem, name, s, args.budget) for s in args.seeds])
        rows.append(runs)
        per = 1000 * runs["cpu_s"].sum() / max(runs["used"].sum(), 1)
        print(
            f"| {name} | {len(runs)} | {runs['used'].mean():.0f} | {runs['cpu_s'].mean():.1f}"
            f" | {runs['wall_s'].mean():.1f} | {per:.0f} |",
            flush=True,
        )
    if args.out:
        pd.concat(rows, ignore_index=True).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
