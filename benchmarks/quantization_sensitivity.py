"""Sobol indices of each layer's bit width on the digits network's accuracy (issue 9).

Computed on the true objective (Top-1 loss against the uniform 8-bit network, no
surrogate), so the intervals are the Monte-Carlo (bootstrap) error alone:

- ``box``: every layer independently uniform on 1..8 bits (size limit 0.5, which every
  policy meets, since 8 bits everywhere is a quarter of the float32 size): Saltelli
  design with ``--n-box`` base rows, ``n (d + 2)`` evaluations;
- ``valid``: uniform over the policies that fit the size limit ``--size-limit`` (the
  region a search explores): ``--n-valid`` sampled policies, Kucherenko's estimators.

Policies are evaluated on ``--jobs`` local Dask workers (``gpautotune.parallel.dask_client``;
the network is trained once, in the parent, and loaded from the cache by each worker)::

    PYTHONPATH=$PWD python benchmarks/quantization_sensitivity.py --n-box 256 \
        --n-valid 2048 --jobs 12 --out OUT

Writes ``<out>/sensitivity-<domain>.csv`` and ``.png`` and prints a Markdown table with
the first (stem) and last (classifier) layers marked.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")


def _problem(size_limit: float, device: str | None) -> Any:
    """The digits problem at ``size_limit`` (torch on one thread)."""
    import torch

    from gpautotune.problems.quantization import digits_problem

    torch.set_num_threads(1)
    return digits_problem(size_limit=size_limit, device=device)


def _evaluate_rows(job: tuple[float, str | None, np.ndarray]) -> np.ndarray:
    """The Dask task: the losses of some policies (rows of the index matrix). The problem
    is built once per worker and size limit and kept on the worker."""
    from distributed import get_worker

    size_limit, device, index = job
    problems = get_worker().__dict__.setdefault("digits_problems", {})
    if (size_limit, device) not in problems:
        problems[size_limit, device] = _problem(size_limit, device)
    problem = problems[size_limit, device]
    out = np.empty(len(index))
    for i, config in enumerate(problem.space.to_configs(index)):
        m = problem.evaluate(config)
        out[i] = m.value if m.value is not None else np.nan
    return out


class ParallelObjective:
    """``f(index) -> losses``, the rows split over the workers of a Dask client."""

    def __init__(self, client: Any, jobs: int, size_limit: float, device: str | None) -> None:
        self.client, self.jobs, self.size_limit, self.device = client, jobs, size_limit, device
        self.evaluations = 0

    def __call__(self, index: np.ndarray) -> np.ndarray:
        chunks = np.array_split(index, max(1, min(len(index), 8 * self.jobs)))
        tasks = [(self.size_limit, self.device, c) for c in chunks]
        values = np.concatenate(
            self.client.gather(self.client.map(_evaluate_rows, tasks, pure=False))
        )
        self.evaluations += len(index)
        if np.isnan(values).any():
            raise RuntimeError(
                f"{int(np.isnan(values).sum())} policies were not evaluated (size limit?)"
            )
        return values


def _markdown(table, layers: list[str]) -> str:
    first, last = layers[0], layers[-1]
    lines = ["| rank | layer | S1 [95% CI] | ST [95% CI] |", "|---|---|---|---|"]
    for _, r in table.sort_values("rank").iterrows():
        name = r["parameter"] + (
            " (first)" if r["parameter"] == first else " (last)" if r["parameter"] == last else ""
        )
        lines.append(
            f"| {int(r['rank'])} | {name} "
            f"| {r['S1']:.3f} [{r['S1_low']:.3f}, {r['S1_high']:.3f}] | "
            f"{r['ST']:.3f} [{r['ST_low']:.3f}, {r['ST_high']:.3f}] |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--n-box", type=int, default=256, help="Saltelli base rows (0: skip the box)"
    )
    parser.add_argument("--n-valid", type=int, default=2048, help="valid policies (0: skip)")
    parser.add_argument("--size-limit", type=float, default=0.07)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/quantization"))
    args = parser.parse_args()

    from gpautotune.analysis.explain import plot_indices
    from gpautotune.parallel import dask_client
    from gpautotune.sensitivity import sobol_indices

    args.out.mkdir(parents=True, exist_ok=True)
    summary = {}
    with dask_client(None, args.jobs) as client:
        for domain, n, limit in (
            ("box", args.n_box, 0.5),
            ("valid", args.n_valid, args.size_limit),
        ):
            if n <= 0:
                continue
            problem = _problem(limit, args.device)
            layers = [p.name for p in problem.space.parameters]
            objective = ParallelObjective(client, args.jobs, limit, args.device)
            t0 = time.perf_counter()
            result = sobol_indices(
                objective,
                problem.space,
                domain=domain,
                n=n,
                bootstrap=args.bootstrap,
                seed=args.seed,
            )
            wall = time.perf_counter() - t0
            result.table.to_csv(args.out / f"sensitivity-{domain}.csv", index=False)
            title = f"digits network, Top-1 loss: {domain}" + (
                " (1..8 bits, no size limit)" if domain == "box" else f" (size limit {limit})"
            )
            plot_indices(
                result.table,
                args.out / f"sensitivity-{domain}.png",
                title=title,
                confidence=result.confidence,
                interval="bootstrap of the design, true objective",
            )
            summary[domain] = {
                "method": result.method,
                "evaluations": objective.evaluations,
                "wall_s": round(wall, 1),
                "jobs": args.jobs,
                "device": args.device,
                "size_limit": limit,
            }
            print(
                f"\n## {title}\n\n{result.method}; "
                f"{objective.evaluations} evaluations in {wall:.0f} s\n"
            )
            print(_markdown(result.table, layers))
    (args.out / "sensitivity.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
