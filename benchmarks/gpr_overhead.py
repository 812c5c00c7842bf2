"""GPR overhead: ask() time against the number of observations, and peak memory.

Run: .venv/bin/python benchmarks/gpr_overhead.py [--sizes 50 120 250 500 1000] [--asks 3]
     .venv/bin/python benchmarks/gpr_overhead.py --kt-cache kt-caches/gemm/RTX_3090.json.gz \
         --sizes 120 250 500 1000 --bits-sizes
     .venv/bin/python benchmarks/gpr_overhead.py --kt-cache ... --sizes 120 --asks 11 --seeds 0 1 2
     .venv/bin/python benchmarks/gpr_overhead.py ... --option acquisition=hedge   # an option
     .venv/bin/python benchmarks/gpr_overhead.py --kt-cache ... --restriction "KWG % KWI == 0" ...
     .venv/bin/python benchmarks/gpr_overhead.py --kt-cache ... --fit-steps   # L-BFGS per fit

For each size N, a GPR strategy is told N measured trials (a constrained Sobol sample of
the problem, evaluated) and then asked for one configuration ``--asks`` times (each ask
measures the candidate it proposes, so the model grows by one); the median wall time of
those asks is reported (the first includes the fresh multi-start fit; with ``--seeds``, the
median over every seed's asks, each seed its own sample and run). Laplacian: K40c
replay, exhaustive pool of ~23,000 configurations; 54 factors: ConstrainedBitsProblem,
non-enumerable pool (sample + neighbourhoods + backlog); ``--kt-cache PATH``: a Kernel
Tuner cache instead of the Laplacian (gemm's 17,956 configurations is the largest shared),
with ``--restriction`` its script's restrictions (each one adds to the model the products
and quotients it names, ``derived_inputs``). With ``--fit-steps``, each L-BFGS fit of the
timed asks is counted by its iteration limit and BoTorch's stop status (warm fits from the
previous step's hyperparameters, fresh ones from the defaults or prior draws).
"""

from __future__ import annotations

import argparse
import collections
import resource
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

from gpautotune.config import apply_overrides
from gpautotune.problems import ConstrainedBitsProblem, laplacian_replay
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.strategies import make_strategy
from gpautotune.tuner import TuningRun


def time_asks(problem, n_obs: int, asks: int, seed: int = 0, **options) -> list[float]:
    # stall=None: a told Sobol sample looks "stalled" and the ask would be an escape step,
    # which scores only the best point's one-parameter moves; time the full-pool step.
    strategy = make_strategy("gpr", problem.space, seed=seed, stall=None, **options)
    run = TuningRun(problem, strategy, budget=n_obs + asks)
    design = problem.space.sample(n_obs, method="sobol", seed=seed + 1)
    for config in design:  # measured data, told as if the run had measured it
        run.tell(config, problem.evaluate(config))
    times = []
    for _ in range(asks):
        t0 = time.perf_counter()
        (config,) = run.ask(1)
        times.append(time.perf_counter() - t0)
        run.tell(config, problem.evaluate(config))
    return times


@contextmanager
def counting_fits() -> Iterator[collections.Counter]:
    """Count the surrogate's L-BFGS fits by (iteration limit, stop status) while open."""
    from gpautotune.surrogate import _gp

    fits: collections.Counter = collections.Counter()
    original = _gp.fit_gpytorch_mll_scipy

    def counted(*args, **kwargs):
        result = original(*args, **kwargs)
        fits[(kwargs["options"]["maxiter"], result.step, result.status.name)] += 1
        return result

    _gp.fit_gpytorch_mll_scipy = counted
    try:
        yield fits
    finally:
        _gp.fit_gpytorch_mll_scipy = original


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 120, 250, 500, 1000])
    parser.add_argument("--bits-sizes", type=int, nargs="*", default=[64, 245])
    parser.add_argument("--kt-cache", help="a Kernel Tuner cache replayed instead of the K40c")
    parser.add_argument(
        "--restriction", action="append", default=None, help="a restriction of --kt-cache"
    )
    parser.add_argument("--asks", type=int, default=3)
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="one sample and run per seed"
    )
    parser.add_argument(
        "--option", action="append", default=[], help="a GPR option as KEY=VALUE (repeatable)"
    )
    parser.add_argument(
        "--fit-steps", action="store_true", help="count the L-BFGS fits by limit and status"
    )
    args = parser.parse_args()
    options = apply_overrides({}, args.option)  # YAML scalars; ConfigError names a bad one
    print("| problem | observations | median ask() s | min | max |")
    print("|---|---|---|---|---|")
    first = (
        (
            f"{args.kt_cache} (exhaustive pool)",
            kt_cache_problem(args.kt_cache, restrictions=args.restriction),
        )
        if args.kt_cache
        else ("laplacian (exhaustive pool)", laplacian_replay())
    )
    for label, problem, sizes in (
        (*first, args.sizes),
        ("54-factor constrained bits", ConstrainedBitsProblem(), args.bits_sizes),
    ):
        for n in sizes:
            with counting_fits() as fits:
                times = [
                    t for s in args.seeds for t in time_asks(problem, n, args.asks, s, **options)
                ]
            print(
                f"| {label} | {n} | {statistics.median(times):.3f} "
                f"| {min(times):.3f} | {max(times):.3f} |",
                flush=True,
            )
            if args.fit_steps:
                for (limit, steps, status), count in sorted(fits.items()):
                    print(f"  fits with limit {limit}: {count} stopped {status} at {steps}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of the process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
