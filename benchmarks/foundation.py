"""Foundation timings: constrained Sobol filtering, 54-factor sampling, journal writes.

Run: .venv/bin/python benchmarks/foundation.py [--repeats 5]
Prints a Markdown table (median and max over repeats) for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from gpautotune.problems import Measurement
from gpautotune.problems.laplacian.space import laplacian_space
from gpautotune.problems.synthetic import ConstrainedBitsProblem
from gpautotune.space._sampling import unit_sample
from gpautotune.storage import Journal, RunSpec
from gpautotune.trial import Trial


def filter_laplacian() -> str:
    space = laplacian_space()
    index = space.from_unit(unit_sample("sobol", space.dims, 1_000_000, seed=0))
    valid = space.unique_rows(index[space.valid_mask(index)])
    return f"{len(index):,} raw -> {len(valid):,} distinct valid"


def sample_bits() -> str:
    problem = ConstrainedBitsProblem()
    configs = problem.space.sample(3240, "sobol", seed=0)
    return f"{len(configs):,} valid of 54 factors"


def journal_writes() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(os.path.join(tmp, "bench.db"))
        run = journal.open_run(RunSpec("bench", {}, "none", {}, 0, {}), 10_000)
        config = {f"p{i}": i for i in range(8)}
        for n in range(10_000):  # one commit per trial, as the tuner does
            journal.add_trial(
                run.id,
                Trial(n, config, Measurement.success(1.0 + n, samples=[1.0, 2.0]), {"ei": 0.5}),
            )
        return f"{journal.count_trials(run.id):,} trials, one commit each"


CASES = [
    ("filter 10^6 raw Sobol points of the Laplacian space", filter_laplacian, 2.0),
    ("3,240 valid points of the 54-factor size-constrained space", sample_bits, 5.0),
    ("journal: 10,000 trial writes (SQLite WAL)", journal_writes, 5.0),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print("| operation | result | median s | max s | goal s |")
    print("|---|---|---|---|---|")
    for label, fn, goal in CASES:
        times, what = [], ""
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            what = fn()
            times.append(time.perf_counter() - t0)
        print(f"| {label} | {what} | {statistics.median(times):.3f} | {max(times):.3f} | {goal} |")


if __name__ == "__main__":
    main()
