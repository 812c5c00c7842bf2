"""What scoring a candidate pool costs on one torch thread and on several.

Run: PYTHONPATH=$PWD python benchmarks/score_cost.py [--n 120] [--dims 10] [--rows 17956]
     [--threads 1 2] [--repeat 5]

GPR fits on one thread (``GPSettings.threads``) and scores its pool on the threads torch
has outside the step (strategies/gpr.py). For the default GP (ARD Matérn 5/2, a linear
trend over one feature) at its starting hyperparameters on random data of ``--n`` rows,
log-EI at ``--rows`` random candidates (gemm's 17,956 by default) through ``score_many``,
three times in turn per thread count: the median seconds of ``--repeat`` scorings, and
whether the values equal the first thread count's to the last bit.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from gpautotune.acquisition import make_acquisition, score_many
from gpautotune.surrogate import GPSettings, GPSurrogate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--rows", type=int, default=17_956)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    gp = GPSurrogate(GPSettings(), args.dims, 1)
    X = rng.random((args.n, args.dims + 1))
    model = gp._build(*gp._tensors(X, np.exp(rng.normal(size=args.n)))).eval()
    acqf = make_acquisition("logei", model, best_f=-0.5)
    pool = rng.random((args.rows, args.dims + 1))
    times: dict[int, list[float]] = {t: [] for t in args.threads}
    first = None
    for _ in range(3):
        for threads in args.threads:
            torch.set_num_threads(threads)
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                values = score_many([acqf], pool)[0]
                times[threads].append(time.perf_counter() - t0)
            first = values if first is None else first
            assert np.array_equal(values, first), f"{threads} threads gave other floats"
    print(f"| threads | median seconds to score {args.rows:,} rows ({args.n}-row GP) |")
    print("|---|---|")
    for threads, seconds in times.items():
        print(f"| {threads} | {statistics.median(seconds):.3f} |")
    print("the values are the same floats on every thread count")


if __name__ == "__main__":
    main()
