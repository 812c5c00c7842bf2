"""One stored GPR run, traced from its journal: each new best (evaluation, slowdown, the
step's source) and, at given evaluations, the kernel inputs with the shortest length-scales
in the fit that step used (parameters, then the derived inputs the run's settings name).

    python benchmarks/run_trace.py results/gpr-kt-relations.db gemm/RTX_3090 19 --at 40 60
"""

from __future__ import annotations

import argparse

import numpy as np

from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.storage import Journal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("journal")
    parser.add_argument("problem", help="a cache of kt-caches/, e.g. gemm/RTX_3090")
    parser.add_argument("seed", type=int)
    parser.add_argument("--label", help="the run's label (default: the first run found)")
    parser.add_argument("--at", type=int, nargs="+", default=[40, 60])
    parser.add_argument("--shortest", type=int, default=3)
    args = parser.parse_args(argv)
    journal = Journal(args.journal, read_only=True)
    run = next(
        r
        for r in journal.runs()
        if r.problem == args.problem
        and r.seed == args.seed
        and (args.label is None or r.label == args.label)
    )
    optimum = kt_cache_problem(f"kt-caches/{args.problem}.json.gz").optimum
    strategy = run.settings["strategy"]
    names = [p["name"] for p in run.settings["space"]["parameters"]]
    names += strategy.get("extra_inputs", []) + strategy.get("derived", [])
    print(f"{run.describe()}; relations read: {strategy.get('relations', [])}")
    best = np.inf
    for i, trial in enumerate(journal.trials(run.id), start=1):
        if trial.ok and trial.value < best:
            best = trial.value
            print(f"evaluation {i}: best {best / optimum:.4f} ({trial.source})")
        scales = trial.info.get("lengthscales")
        if i in args.at and scales is not None:
            order = np.argsort(scales)[: args.shortest]
            shown = ", ".join(f"{names[k]} {scales[k]:.3f}" for k in order)
            print(f"  at {i}, shortest length-scales: {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
