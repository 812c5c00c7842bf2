"""How rugged a measured space is for local moves: its local minima under one-parameter,
two-parameter and adjacent moves (docs/benchmarks/gpr-spaces.md, "Where runs still get
trapped", "Adjacent moves after a complete poll").

Usage::

    GPAUTOTUNE_DATA=../shared/data python benchmarks/local_minima.py          # all 13 tables
    python benchmarks/local_minima.py --tables gemm/RTX_3060_laptop pnpoly/RTX_Titan

A configuration is a local minimum of a neighbourhood when it runs and no valid
configuration of its neighbourhood is faster: *one-parameter moves* change one parameter
to any other level (the moves GPR's escape steps poll), *two-parameter moves* change at
most two, *adjacent moves* move any number of parameters by one level each (Kernel Tuner's
``adjacent`` neighbours, which ``poll_adjacent`` polls). For each table: the valid
configurations, the local minima of each kind, the median number of valid moves of each
kind a running configuration has, and how many of the minima lie within 10% and 20% of the
optimum (a run that reaches one of those and polls only its neighbourhood stays
there). Output: ``benchmarks/results/gpr/local_minima.csv``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from rich.progress import track

from gpautotune.problems import laplacian_replay
from gpautotune.problems.kt_cache import kt_cache_problem

OUT = Path(__file__).parent / "results" / "gpr" / "local_minima.csv"
CACHES = [
    f"{k}/{g}"
    for k in ("gemm", "pnpoly", "convolution")
    for g in ("RTX_2080_Ti", "RTX_3060_laptop", "RTX_3090", "RTX_Titan")
]


def table(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The valid configurations (index rows) and their values (inf: failed)."""
    problem = (
        laplacian_replay()
        if name == "laplacian-k40c"
        else kt_cache_problem(f"kt-caches/{name}.json.gz")
    )
    rows = problem.space.enumerate_index()
    values = [problem.evaluate(c).value for c in problem.space.to_configs(rows)]
    return rows, np.array([np.inf if v is None else v for v in values], dtype=float)


def local_minima(
    rows: np.ndarray, values: np.ndarray, changed: int | None
) -> tuple[np.ndarray, float]:
    """Positions of the running configurations no configuration within ``changed``
    parameters of improves on (``None``: no adjacent configuration), and the median
    number of valid moves a running configuration has."""
    order = np.flatnonzero(np.isfinite(values))
    minima, moves = [], []
    for i in track(order, description=f"moves of {changed or 'adjacent'}", transient=True):
        if changed is None:
            distance = np.abs(rows - rows[i]).max(axis=1)
            near = distance == 1
        else:
            distance = (rows != rows[i]).sum(axis=1)
            near = (distance >= 1) & (distance <= changed)
        moves.append(int(near.sum()))
        if not near.any() or values[i] <= values[near].min():
            minima.append(i)
    return np.array(minima, dtype=int), float(np.median(moves))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", nargs="+", default=["laplacian-k40c", *CACHES])
    args = parser.parse_args()
    out = []
    for name in args.tables:
        rows, values = table(name)
        best = values[np.isfinite(values)].min()
        line = {"table": name, "valid": len(rows), "failing": int(np.isinf(values).sum())}
        for changed, label in ((1, "one"), (2, "two"), (None, "adjacent")):
            minima, moves = local_minima(rows, values, changed)
            slow = values[minima] / best
            kind = "adjacent moves" if changed is None else f"{label}-parameter moves"
            line[f"minima, {kind}"] = len(slow)
            line[f"median moves ({label})"] = moves
            line[f"within 10% ({label})"] = int((slow <= 1.1).sum())
            line[f"within 20% ({label})"] = int((slow <= 1.2).sum())
        out.append(line)
        print(line, flush=True)
    frame = pd.DataFrame(out)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(OUT, index=False)
    print("| " + " | ".join(frame.columns) + " |")
    print("|" + "---|" * len(frame.columns))
    for row in frame.itertuples(index=False):
        print("| " + " | ".join(str(v) for v in row) + " |")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
