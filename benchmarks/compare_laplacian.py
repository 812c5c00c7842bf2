"""Wall time of a comparison run three ways: in-process without Dask, 1 and 2 workers.

The RS and Sobol part of ``configs/compare-laplacian.yaml`` with fewer repetitions, each
way into a fresh journal, with the load average before and after (the harness measuring
itself, which a comparison file cannot describe)::

    PYTHONPATH=$PWD python benchmarks/compare_laplacian.py scaling --reps 100 \
        --out benchmarks/results/compare/scaling.json

The comparison itself: ``gpautotune compare configs/compare-laplacian.yaml``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import yaml

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "compare-laplacian.yaml"


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def scaling(args: argparse.Namespace) -> None:
    from gpautotune.comparison import run_comparison

    data = yaml.safe_load(CONFIG.read_text())
    data["strategies"] = [s for s in data["strategies"] if s["label"] in ("RS", "Sobol")]
    data["repetitions"] = args.reps
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for workers in args.workers:
            data["storage"] = str(Path(tmp) / f"w{workers}.db")
            path = Path(tmp) / f"w{workers}.yaml"
            path.write_text(yaml.safe_dump(data))
            load_before = _load_average()
            if workers == 0:  # the same repetitions in this process, one after another, no Dask
                outcomes, wall = _sequential(path)
            else:
                result = run_comparison(path, workers=workers)
                outcomes, wall = result.outcomes, result.wall_s
            rows.append(
                {
                    "workers": workers,
                    "repetitions": len(outcomes),
                    "wall_s": round(wall, 1),
                    "task_s_mean": round(sum(o.duration_s for o in outcomes) / len(outcomes), 3),
                    "load_average_before": load_before,
                    "load_average_after": _load_average(),
                }
            )
            print(json.dumps(rows[-1]))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")


def _sequential(path: Path) -> tuple[list, float]:
    from gpautotune.comparison import expand, load_comparison, run_repetition
    from gpautotune.config import build_problem

    t0 = time.perf_counter()
    cfg = load_comparison(path)
    reps = list(expand(cfg, [build_problem(p, factory_names=True) for p in cfg.problems]))
    return [run_repetition(r) for r in reps], time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("scaling")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument(
        "--workers", type=int, nargs="+", default=[0, 1, 2], help="0: in this process, without Dask"
    )
    p.add_argument("--out", default="benchmarks/results/compare/scaling.json")
    args = parser.parse_args()
    scaling(args)


if __name__ == "__main__":
    main()
