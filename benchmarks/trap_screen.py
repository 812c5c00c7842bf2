"""Screen GPR options on the runs that decide issue #18's worst-run bound.

    GPAUTOTUNE_DATA=../shared/data python benchmarks/trap_screen.py \
        --options '{"stall": 10}' [--options ...] [--workers 2] [--out rows.csv]

Each ``--options`` (a JSON object of GPR options; ``{}`` is the default) runs the eight
(cache, seed) pairs of ``RUNS`` through ``tune(problem, "gpr", 120, seed)``: the four
runs the default leaves above the bound on gemm over 40 seeds and four that options
measured before trapped while the default did not (docs/benchmarks/gpr-spaces.md, "A new
lineage after a long stall"). It prints each run's best slowdown at 60 and 120 beside the
cache's bound (the best peer's mean at 60 over seeds 1-40) and writes the rows to
``--out``. A screen of eight runs says which traps an option frees; it cannot say how many
it makes elsewhere (docs/benchmarks/gpr-spaces.md, "A smaller initial design on gemm"), so
an option that passes it is then run on every seed of the tables with ``gpautotune
compare``.
About 5 minutes per option on two cores.
"""

from __future__ import annotations

import argparse
import csv
import json
import warnings

import numpy as np
from rich.console import Console
from rich.table import Table

from gpautotune.parallel import dask_client
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.tuner import tune

#: The best peer's mean slowdown at 60 over seeds 1-40 (``kt_paired_table.py --must-shows``).
BOUNDS = {
    "gemm/RTX_3060_laptop": 1.1231,
    "gemm/RTX_3090": 1.1584,
    "pnpoly/RTX_2080_Ti": 1.0243,
    "convolution/RTX_2080_Ti": 1.0302,
}
#: (cache, seed): the default's trapped gemm runs, then runs other options trapped.
RUNS = [
    ("gemm/RTX_3060_laptop", 3),
    ("gemm/RTX_3060_laptop", 6),
    ("gemm/RTX_3060_laptop", 11),
    ("gemm/RTX_3090", 19),
    ("gemm/RTX_3060_laptop", 10),
    ("gemm/RTX_3060_laptop", 16),
    ("convolution/RTX_2080_Ti", 7),
    ("pnpoly/RTX_2080_Ti", 10),
]
BUDGET = 120


def screen(table: str, seed: int, options: str) -> dict:
    """One run of the default GPR with ``options`` (JSON): its best at 60 and 120."""
    warnings.simplefilter("ignore")
    problem = kt_cache_problem(f"kt-caches/{table}.json.gz")
    result = tune(problem, "gpr", BUDGET, seed=seed, strategy_options=json.loads(options))
    values = [t.value / problem.optimum if t.ok else np.inf for t in result.trials]
    best = np.minimum.accumulate(values)
    return {
        "options": options,
        "table": table,
        "seed": seed,
        "slowdown_60": round(float(best[59]), 4),
        "slowdown_120": round(float(best[-1]), 4),
        "bound": BOUNDS[table],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--options", action="append", default=[], help="GPR options (JSON)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="CSV file for the rows")
    args = parser.parse_args()
    sets = args.options or ["{}"]
    for options in sets:
        if not isinstance(json.loads(options), dict):
            parser.error(f"--options {options!r} is not a JSON object")
    tasks = [(t, s, o) for o in sets for t, s in RUNS]
    with dask_client(workers=args.workers) as client:  # one run per task
        rows = client.gather(client.map(screen, *zip(*tasks, strict=True), pure=False))
    table = Table(title=f"best slowdown of each run ({BUDGET} evaluations)")
    for column in ("options", "table", "seed", "at 60", "at 120", "bound"):
        table.add_column(column)
    for r in rows:
        above = r["slowdown_120"] > r["bound"]
        final = f"[bold red]{r['slowdown_120']}[/]" if above else str(r["slowdown_120"])
        cells = (r["options"], r["table"], str(r["seed"]), str(r["slowdown_60"]), final)
        table.add_row(*cells, str(r["bound"]))
    Console().print(table)
    if args.out:
        with open(args.out, "w", newline="") as f:
            writer = csv.DictWriter(f, list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
