"""One GPR tuning run of the Laplacian kernel spread over every GPU of a host (issue 25).

For a host with 1 to 8 NVIDIA GPUs. Runs ``configs/laplacian-gpus.yaml`` (thesis sizes,
budget 240) twice through the command line: with one Dask worker per GPU (each worker's
OpenCL device set through ``GPAUTOTUNE_OPENCL_DEVICE``, with the resource ``GPU=1``),
then with one worker on the first GPU; on a host with a single GPU, the first run has
two workers sharing it. Each run has its own journal. Then prints, from the journals:
wall time, evaluations per minute, the GPR model steps and their time, the best kernel
and its fraction of the copy bound at the largest size, trials lost and repeated (0
expected), trials per device (name, OpenCL index, PCI bus) and, per worker, the devices
its trials were measured on.

    PYTHONPATH=$PWD python benchmarks/laplacian_gpus.py /tmp/gpus
    PYTHONPATH=$PWD python benchmarks/laplacian_gpus.py /tmp/gpus --cluster scheduler
    # a dry run on PoCL (CPU OpenCL), two workers sharing its device, tiny images
    PYTHONPATH=$PWD python benchmarks/laplacian_gpus.py /tmp/gpus --platform portable \
        --budget 6 --set problem.platform=0 --set problem.sizes=tiny

``--cluster scheduler`` starts a ``dask scheduler`` and one ``dask worker`` process per
device (``GPAUTOTUNE_OPENCL_DEVICE=nvidia:<i> DASK_DISTRIBUTED__WORKER__DAEMON=False dask
worker ... --resources GPU=1``), the way a real cluster is set up, and tunes with
``--scheduler``; the default lets ``gpautotune tune --devices`` start the same workers.
If ``OCL_ICD_VENDORS`` is unset and NVIDIA's driver is at
``/usr/local/nvidia/lib64/libnvidia-opencl.so.1``, an ``.icd`` folder naming it is
written first (``register_icd``); every process started here inherits it. Writes
``OUT/<run>.db`` and ``OUT/<run>.json`` per run, and ``OUT/summary.json`` and
``OUT/summary.md`` over the runs in OUT (``--only many`` and ``--only single`` make the
two runs in two commands).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpautotune.problems.opencl import DEVICE_ENV, list_devices, register_icd
from gpautotune.storage import Journal

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "laplacian-gpus.yaml"


def gpu_selectors(platform: str) -> list[str]:
    """``platform:<i>`` for every device of the platform(s) matching ``platform`` that is
    the same model as the first one (a run measures one device model)."""
    found = [d for d in list_devices() if platform.lower() in d.platform.lower()]
    if not found:
        listing = "; ".join(d.label() for d in list_devices())
        raise SystemExit(f"no OpenCL device on a platform matching {platform!r}: {listing}")
    return [f"{platform}:{i}" for i, d in enumerate(found) if d.device == found[0].device]


def _start(command: list[str], log: Path, **env: str) -> subprocess.Popen:
    """A background process of this Python, its output in ``log``."""
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", *command], stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )  # fmt: skip


@contextmanager
def scheduler_cluster(selectors: list[str], folder: Path):
    """A ``dask scheduler`` and one ``dask worker`` per selector (its device in
    :data:`DEVICE_ENV`, the resource ``GPU=1``, non-daemonic so that it can start the
    process that measures); yields the scheduler's address. Logs: ``folder/dask-*.log``."""
    file = folder / "scheduler.json"
    file.unlink(missing_ok=True)
    procs = [
        _start(["dask", "scheduler", "--scheduler-file", str(file), "--port", "0",
                "--dashboard-address", ":0"], folder / "dask-scheduler.log")
    ]  # fmt: skip
    try:
        while not file.is_file():
            time.sleep(0.2)
        address = json.loads(file.read_text())["address"]
        for i, selector in enumerate(selectors):
            command = ["dask", "worker", address, "--nthreads", "1", "--nworkers", "1",
                       "--resources", "GPU=1", "--name", f"gpu-{i}"]  # fmt: skip
            env = {DEVICE_ENV: selector, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
            procs.append(_start(command, folder / f"dask-worker-{i}.log", **env))
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            proc.wait(60)


def tune_command(db: Path, args: argparse.Namespace) -> list[str]:
    overrides = [x for item in args.set for x in ("--set", item)]
    return [
        sys.executable, "-m", "gpautotune", "tune", str(CONFIG), "--db", str(db),
        "--budget", str(args.budget), "--seed", str(args.seed), *overrides,
    ]  # fmt: skip


def run(name: str, selectors: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """One tuning run on ``selectors`` (a fresh journal); its summary."""
    db = args.out / f"{name}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    command = tune_command(db, args)
    start = time.time()
    if args.cluster == "scheduler":
        with scheduler_cluster(selectors, args.out) as address:
            subprocess.run([*command, "--scheduler", address], check=True, cwd=ROOT)
    else:
        subprocess.run([*command, "--devices", ",".join(selectors)], check=True, cwd=ROOT)
    wall = round(time.time() - start, 1)
    summary = journal_summary(db, args.budget)
    return {"run": name, "workers": len(selectors), "devices": selectors, "process_wall_s": wall,
            **summary}  # fmt: skip


def journal_summary(db: Path, budget: int) -> dict[str, Any]:
    """What the journal says of its one run."""
    with Journal(db, read_only=True) as journal:
        (record,) = journal.runs()
        trials = journal.trials(record.id)
        running = journal.running(record.id)
    keys = [json.dumps(t.config, sort_keys=True) for t in trials]
    span = max(t.started_at + t.duration_s for t in trials) - min(t.started_at for t in trials)
    ok = [t for t in trials if t.ok]
    best = min(ok, key=lambda t: t.value) if ok else None
    devices = Counter(_device(t) for t in trials if "device" in t.measurement.metrics)
    by_worker: dict[str, Counter] = {}
    for t in trials:
        by_worker.setdefault(str(t.info.get("worker")), Counter())[_device(t)] += 1
    fits = {t.info["fit"]["number"]: t.info for t in trials if "fit" in t.info}
    return {
        "evaluations": len(trials),
        "tuning_wall_s": round(span, 1),
        "model_steps": len(fits),
        "model_step_s": round(sum(i.get("fit_s", 0) + i.get("acq_s", 0) for i in fits.values()), 1),
        "evaluations_per_minute": round(60 * len(trials) / span, 2),
        "statuses": dict(Counter(t.status.value for t in trials)),
        "lost": max(budget - len(trials), 0) + len(running),
        "repeated": len(keys) - len(set(keys)),
        "per_device": dict(devices),
        "per_worker": {w: dict(c) for w, c in sorted(by_worker.items())},
        **(best_kernel(best) if best else {}),
    }


def _device(trial: Any) -> str:
    """The device a trial was measured on: name, OpenCL index, PCI bus (where known)."""
    m = trial.measurement.metrics
    return " ".join(str(m[k]) for k in ("device", "device_index", "pci_bus") if k in m) or "-"


def best_kernel(trial: Any) -> dict[str, Any]:
    """The best trial: configuration, time per pixel, fractions of the copy bound."""
    m = trial.measurement.metrics
    sizes, per_size = m.get("sizes", []), m.get("time_per_pixel_by_size", [])
    bound = m.get("bound_time_per_pixel_s")
    largest = max(range(len(sizes)), key=lambda i: sizes[i][0] * sizes[i][1]) if sizes else None
    return {
        "best_trial": trial.number,
        "best_config": dict(trial.config),
        "best_ps_per_pixel": round(trial.value * 1e12, 3),
        "bound_fraction_mean": m.get("bound_fraction"),
        "bound_fraction_largest": (
            round(bound / per_size[largest], 4)
            if bound and largest is not None and per_size
            else None
        ),
        "largest_size": sizes[largest] if largest is not None else None,
        "best_device": f"{m.get('device')} {m.get('device_index')} {m.get('pci_bus', '')}".strip(),
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    keys = ["run", "workers", "evaluations", "process_wall_s", "tuning_wall_s",
            "evaluations_per_minute", "model_steps", "model_step_s", "best_ps_per_pixel",
            "bound_fraction_largest", "lost", "repeated"]  # fmt: skip
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(str(r.get(k)) for k in keys) + " |" for r in rows]
    for r in rows:
        lines += ["", f"{r['run']}: best {r.get('best_config')} on {r.get('best_device')}"]
        lines += [f"- {k}: {n} trials" for k, n in sorted(r["per_device"].items())]
        for worker, devices in r["per_worker"].items():
            listing = ", ".join(f"{n} trials on {d}" for d, n in sorted(devices.items()))
            lines += [f"- worker {worker}: {listing}"]
    if len(rows) == 2 and rows[0]["tuning_wall_s"]:
        lines += ["", f"speed-up {rows[1]['tuning_wall_s'] / rows[0]['tuning_wall_s']:.2f}"
                  f" with {rows[0]['workers']} workers"]  # fmt: skip
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--platform", default="nvidia")
    parser.add_argument("--devices", default=None, help="selectors, e.g. nvidia:0,nvidia:1")
    parser.add_argument("--budget", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster", choices=["local", "scheduler"], default="local")
    parser.add_argument(
        "--only", choices=["many", "single"], help="one of the two runs (the summary lists both"
        " runs whose results are in OUT)"
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], help="override of the config (KEY=VALUE)"
    )
    args = parser.parse_args()
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    icd = register_icd()  # before the first OpenCL call here and in every process started
    selectors = args.devices.split(",") if args.devices else gpu_selectors(args.platform)
    if len(selectors) == 1:
        selectors = selectors * 2  # one GPU: two workers share it
    print(f"ICD folder {icd or os.environ.get('OCL_ICD_VENDORS')}; workers on {selectors}")
    plan = {"many": (f"workers{len(selectors)}", selectors), "single": ("workers1", selectors[:1])}
    for which, (name, chosen) in plan.items():
        if args.only in (None, which):
            row = run(name, chosen, args)
            (args.out / f"{name}.json").write_text(json.dumps(row, indent=1, default=str))
    rows = [json.loads((args.out / f"{name}.json").read_text()) for name, _ in plan.values()
            if (args.out / f"{name}.json").is_file()]  # fmt: skip
    (args.out / "summary.json").write_text(json.dumps(rows, indent=1, default=str))
    text = markdown(rows)
    (args.out / "summary.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
