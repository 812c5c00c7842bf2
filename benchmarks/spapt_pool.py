"""GPR candidate pools on tight SPAPT spaces: sample size and ask() time.

Run (from the repository root)::

    PYTHONPATH=$PWD python benchmarks/spapt_pool.py [--kernels dgemv3 tensor fdtd]
        [--observations 120] [--asks 3]

For each kernel: the valid fraction and how long building its sampling plan takes (the
constraint groups enumerated once per space), the pool's sample part at step 0 by plain
FILTER_SOBOL from 2^20 raw points (the sampler before constraint groups) and by the
current sampler, against the intended 60 x factors; then a GPR strategy (defaults,
``stall=None`` as in ``gpr_overhead.py``: the full-pool step) told ``--observations``
valid configurations with a synthetic objective (no compilation: a fixed random
weighting of the encoded factors) and asked for one configuration ``--asks`` times,
each told back. The pool counts are the strategy's own (``info["pool"]``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from gpautotune.acquisition._pool import POOL_MAX_RAW
from gpautotune.problems import Measurement
from gpautotune.problems.spapt import get_kernel
from gpautotune.space import Space
from gpautotune.space._sampling import filter_index, sample_index
from gpautotune.strategies import make_strategy
from gpautotune.tuner import TuningRun


def objective(space: Space, seed: int = 0):
    """A smooth synthetic log-time: random weights on the encoded factors and their squares."""
    rng = np.random.default_rng(seed)
    w1, w2 = rng.normal(size=space.dims), rng.normal(size=space.dims)

    def value(config: dict) -> float:
        x = space.encode([config])[0]
        return float(np.exp(0.3 * (x @ w1 + (x * x) @ w2)))

    return value


def pool_samples(space: Space, n: int, seed: int = 0) -> tuple[int, float, int, float]:
    """Sizes and times of step 0's sample: plain filtering, then the current sampler."""
    t0 = time.perf_counter()
    plain, _ = filter_index(space, n, seed=seed * 7919, max_raw=POOL_MAX_RAW)
    t1 = time.perf_counter()
    now = sample_index(space, n, seed=seed * 7919, max_raw=POOL_MAX_RAW, strict=False)
    t2 = time.perf_counter()
    return len(plain[:n]), t1 - t0, len(now), t2 - t1


def time_asks(space: Space, observations: int, asks: int) -> tuple[list[float], list[dict]]:
    value = objective(space)
    strategy = make_strategy("gpr", space, seed=0, stall=None)
    run = TuningRun(space, strategy, budget=observations + asks)
    for config in space.sample(observations, seed=1):
        run.tell(config, Measurement.success(value(config)))
    times, pools = [], []
    for _ in range(asks):
        t0 = time.perf_counter()
        (config,) = run.ask(1)
        times.append(time.perf_counter() - t0)
        pools.append(run.tell(config, Measurement.success(value(config))).info["pool"])
    return times, pools


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", nargs="+", default=["dgemv3", "tensor", "fdtd"])
    parser.add_argument("--observations", type=int, default=120)
    parser.add_argument("--asks", type=int, default=3)
    args = parser.parse_args()
    print(
        "| kernel | factors | valid fraction | plan s | intended | FILTER_SOBOL 2^20 (s) "
        "| now (s) | pool per ask: sample / neighbours / backlog | median ask() s | max |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.kernels:
        space = get_kernel(name).space
        t0 = time.perf_counter()
        plan = space.sampling_plan
        plan_s = time.perf_counter() - t0
        n = 60 * space.dims
        plain, plain_s, now, now_s = pool_samples(space, n)
        times, pools = time_asks(space, args.observations, args.asks)
        parts = ", ".join(
            f"{p.get('sample', 0)} / {p.get('neighbors', 0)} / {p.get('backlog', 0)}" for p in pools
        )
        print(
            f"| {name} | {space.dims} | {plan.fraction:.2e} | {plan_s:.2f} | {n:,} "
            f"| {plain:,} ({plain_s:.2f}) | {now:,} ({now_s:.3f}) | {parts} "
            f"| {statistics.median(times):.3f} | {max(times):.3f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
