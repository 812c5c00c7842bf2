"""Comparison benchmarks on the Laplacian K40c replay (issue 5).

Run from the repository root:

  # RS + Sobol of configs/compare-laplacian.yaml (1,000 repetitions each) and the report
  PYTHONPATH=$PWD .venv/bin/python benchmarks/compare_laplacian.py full --workers 2 \
      --db results/compare-laplacian.db --out benchmarks/results/compare/laplacian

  # wall time of the same comparison, fewer repetitions: in-process without Dask (0), then
  # with 1 and 2 local Dask workers
  PYTHONPATH=$PWD .venv/bin/python benchmarks/compare_laplacian.py scaling --reps 100 \
      --out benchmarks/results/compare/scaling.json

``full --reps 500`` runs the first 500 repetitions only; ``full`` then adds the rest to
the same journal (finished repetitions are skipped). ``full`` appends its timing to
``<out>/timing.json``. GPR (200 repetitions) is left out here; ``gpautotune compare
configs/compare-laplacian.yaml`` later adds it to the same journal and the report then
shows all three.
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


def full(args: argparse.Namespace) -> None:
    from gpautotune.analysis import analyse
    from gpautotune.comparison import load_comparison, run_comparison

    cfg = load_comparison(CONFIG)
    load_before = _load_average()
    with tempfile.TemporaryDirectory() as tmp:
        config = CONFIG
        if args.reps:  # the first repetitions only (same seeds, same journal runs)
            data = yaml.safe_load(CONFIG.read_text())
            data["repetitions"] = args.reps
            config = Path(tmp) / "first.yaml"
            config.write_text(yaml.safe_dump(data))
        result = run_comparison(config, workers=args.workers, only=["RS", "Sobol"], storage=args.db)
    t0 = time.perf_counter()
    report = analyse(args.db, reference=cfg.reference_label(), checkpoints=cfg.report_checkpoints())
    paths = report.write(args.out)
    report_s = time.perf_counter() - t0
    record = {
        "command": "full",
        "repetitions_per_strategy": args.reps or 1000,
        "workers": result.workers,
        "repetitions_run": len(result.outcomes),
        "skipped": result.skipped,
        "failed": len(result.failed),
        "wall_s": round(result.wall_s, 1),
        "report_s": round(report_s, 1),
        "load_average_before": load_before,
        "load_average_after": _load_average(),
        "task_s_mean": round(
            sum(o.duration_s for o in result.outcomes) / max(len(result.outcomes), 1), 3
        ),
    }
    timing = Path(args.out) / "timing.json"
    history = json.loads(timing.read_text()) if timing.is_file() else []
    timing.write_text(json.dumps([*history, record], indent=1) + "\n")
    print(json.dumps(record))
    print("\n".join(str(p) for p in paths))


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
    p = sub.add_parser("full")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--db", default="results/compare-laplacian.db")
    p.add_argument(
        "--reps", type=int, default=None, help="only the first REPS repetitions of each strategy"
    )
    p.add_argument("--out", default="benchmarks/results/compare/laplacian")
    p = sub.add_parser("scaling")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument(
        "--workers", type=int, nargs="+", default=[0, 1, 2], help="0: in this process, without Dask"
    )
    p.add_argument("--out", default="benchmarks/results/compare/scaling.json")
    args = parser.parse_args()
    {"full": full, "scaling": scaling}[args.command](args)


if __name__ == "__main__":
    main()
