"""Measure every valid configuration of the Laplacian kernel on one OpenCL device: a new
brute-forced table, in the K40c table's format, that no default was chosen on.

    PYTHONPATH=$PWD python benchmarks/laplacian_table.py OUT --platform nvidia \
        --sizes 2560x1600 --workers 15 [--limit N] [--deadline-s S]

Kernels are timed one at a time on the device while their compiles run in parallel:
``--workers`` local Dask workers (:func:`~gpautotune.parallel.dask_client`) each open the
device and compile configurations from source (their compile times recorded), handing
back the program binaries; as each comes in, this process builds the program from its
binary (into the device's program cache, :meth:`~gpautotune.problems.opencl.BuildCache.add`)
and measures it with :class:`~gpautotune.problems.laplacian.runner.LaplacianRunner`
(warm-up, check against the NumPy reference, min of ``--repeats`` timed launches per
size). Writes, in OUT:

- ``table.csv.gz``: one row per configuration: the seven parameters, ``time_per_pixel``
  (empty for a failed one, as ``laplacian-replay`` reads failures), ``status``,
  ``compile_s`` and the first line of the error;
- ``table.json``: the device, driver, sizes, repeats, counts per status, the optimum and
  the wall time.

With ``--deadline-s`` the timing phase stops once that many seconds have passed since the
start, writing what it measured (``table.json`` says how many rows are missing): a rerun
with ``--resume OUT/table.csv.gz`` measures only the rest.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from rich.progress import Progress

from gpautotune.parallel import dask_client
from gpautotune.problems.laplacian.problem import LaplacianProblem
from gpautotune.problems.laplacian.space import laplacian_space
from gpautotune.problems.opencl import register_icd

#: The table's parameter columns: the space's (the K40c table's seven).
PARAMS = laplacian_space().names


def _session(platform: str) -> tuple[LaplacianProblem, Any]:
    """This worker's problem and device session, opened once per worker process."""
    from distributed import get_worker

    from gpautotune.problems.opencl import DeviceSession

    worker = get_worker()
    if not hasattr(worker, "laplacian_table"):
        problem = LaplacianProblem(platform=platform, sizes=[(8, 8)])
        worker.laplacian_table = problem, DeviceSession(problem.device_info)
    return worker.laplacian_table


def _compile(i: int, config: dict[str, Any], platform: str) -> tuple[int, float, bytes | None, str]:
    """(position, compile seconds, binary or None, first line of the build log)."""
    import pyopencl as cl

    from gpautotune.problems.opencl import BuildFailure

    problem, session = _session(platform)
    source = problem.kernel(config).source
    try:
        built = session.builds.build(source)
    except BuildFailure as exc:
        return i, float("nan"), None, (exc.log.strip().splitlines() or [""])[0][:160]
    binary = built.program.get_info(cl.program_info.BINARIES)[0]
    return i, built.build_time_s, bytes(binary), ""


def compiled(configs: list[dict[str, Any]], platform: str, workers: int) -> Iterator[tuple]:
    """(position, compile seconds, binary or None, build log's first line) of each
    configuration, in the order ``workers`` local Dask workers finish compiling them."""
    from distributed import as_completed

    with dask_client(workers=workers) as client:
        futures = [
            client.submit(_compile, i, c, platform, pure=False) for i, c in enumerate(configs)
        ]
        for future in as_completed(futures):
            yield future.result()
            future.release()


def measure_all(
    problem: LaplacianProblem,
    configs: list[dict[str, Any]],
    builds: Iterator[tuple],
    deadline: float,
) -> list[dict[str, Any]]:
    """Each configuration built from its binary and measured, one at a time, as its
    compile comes in (the device times one kernel while the workers compile others)."""
    import pyopencl as cl

    problem.prepare()
    runner = problem._runner
    assert runner is not None
    rows = []
    with Progress() as bar:
        task = bar.add_task("measuring", total=len(configs))
        for i, seconds, binary, log in builds:
            if time.monotonic() > deadline:
                break
            config = configs[i]
            row = {**config, "time_per_pixel": None, "compile_s": seconds, "error": log}
            if binary is None:
                row["status"] = "build_error"
            else:
                kernel = problem.kernel(config)
                program = cl.Program(runner.context, [runner.device], [binary])
                program.build()
                runner.builds.add(kernel.source, runner.build_options, program, seconds)
                m = runner.measure(kernel)
                row["status"] = m.status.value
                if m.ok:
                    row["time_per_pixel"] = m.value
                else:
                    row["error"] = (m.error or "").strip().splitlines()[0][:160] if m.error else ""
            rows.append(row)
            bar.advance(task)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--platform", default="nvidia")
    ap.add_argument("--sizes", nargs="+", default=["2560x1600"])
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    ap.add_argument("--limit", type=int, default=None, help="the first N configurations only")
    ap.add_argument("--deadline-s", type=float, default=float("inf"))
    ap.add_argument("--resume", type=Path, default=None, help="a table.csv.gz to complete")
    args = ap.parse_args()
    start = time.monotonic()
    register_icd()
    args.out.mkdir(parents=True, exist_ok=True)
    problem = LaplacianProblem(platform=args.platform, sizes=args.sizes, repeats=args.repeats)
    configs = [{k: c[k] for k in PARAMS} for c in problem.space.enumerate()]
    configs = configs[: args.limit] if args.limit else configs
    done = pd.read_csv(args.resume) if args.resume else pd.DataFrame(columns=PARAMS)
    seen = {tuple(r) for r in done[PARAMS].astype(str).itertuples(index=False)}
    todo = [c for c in configs if tuple(str(c[k]) for k in PARAMS) not in seen]
    builds = compiled(todo, args.platform, args.workers)
    rows = measure_all(problem, todo, builds, start + args.deadline_s)
    builds.close()  # the pool's processes end here, finished or not
    rows.sort(key=lambda r: tuple(str(r[k]) for k in PARAMS))
    table = pd.concat([done, pd.DataFrame(rows)], ignore_index=True)
    with gzip.open(args.out / "table.csv.gz", "wt") as f:
        table.to_csv(f, index=False)
    ok = table[table["status"] == "ok"]
    best = ok.loc[ok["time_per_pixel"].idxmin()] if len(ok) else None
    summary = {
        **problem._runner.metadata(),
        "configurations": len(configs),
        "measured": len(table),
        "missing": len(configs) - len(table),
        "status": dict(Counter(table["status"])),
        "optimum_time_per_pixel": None if best is None else float(best["time_per_pixel"]),
        "optimum": None if best is None else {k: best[k] for k in PARAMS},
        "wall_s": round(time.monotonic() - start, 1),
        "workers": args.workers,
    }
    (args.out / "table.json").write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps({k: v for k, v in summary.items() if k != "sizes"}, default=str))


if __name__ == "__main__":
    main()
