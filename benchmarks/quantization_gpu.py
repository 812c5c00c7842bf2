"""GPU benchmark (for an NVIDIA H100 with CUDA PyTorch): policy search on CUDA.

Trains (once, cached) a wider digits network on the GPU, times one policy evaluation on
the GPU and on the CPU (same model, same policies), then runs the quantization-policy
search on CUDA for each strategy and seed, writing everything to OUT::

    python benchmarks/quantization_gpu.py OUT --strategies gpr sobol random --seeds 10

Writes ``OUT/timing.json`` (median seconds of one evaluation, first and cached, GPU and
CPU), ``OUT/trials-<strategy>-<tag>.csv.gz``, ``OUT/summary-<tag>.csv`` (mean best accuracy
loss and its 95% t interval over seeds), ``OUT/settings-<tag>.json`` and the figures
``best_so_far-<tag>.png`` and ``trace-<strategy>-<tag>.png``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from quantization import figures, run_strategy, summarise, time_evaluations  # noqa: E402

from gpautotune.problems.quantization import (  # noqa: E402
    DigitsTraining,
    QuantizationProblem,
    digits_loaders,
    digits_model,
)


def build(width: int, size_limit: float, device: str) -> QuantizationProblem:
    model = digits_model(DigitsTraining(width=width), device=device)
    _, val = digits_loaders()
    return QuantizationProblem(
        model, val, size_limit=size_limit, device=device, name="quantization-digits-wide"
    )


def _device_name(device: str) -> str:
    return (
        torch.cuda.get_device_name(torch.device(device))
        if device.startswith("cuda")
        else platform.processor()
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("out", type=Path, help="output folder")
    p.add_argument("--strategies", nargs="+", default=["gpr", "sobol", "random"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--budget", type=int, default=245)
    p.add_argument("--n-init", type=int, default=64)
    p.add_argument("--size-limit", type=float, default=0.07)
    p.add_argument("--width", type=int, default=64, help="first-stage channels (64: 2.77M weights)")
    p.add_argument("--device", default="cuda", help="the accelerator (cpu only to try the script)")
    p.add_argument("--cpu-threads", type=int, default=os.cpu_count() or 1)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark is for a GPU machine")
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(args.cpu_threads)
    gpu = build(args.width, args.size_limit, args.device)
    cpu = QuantizationProblem(
        digits_model(DigitsTraining(width=args.width), device=args.device).cpu(),
        digits_loaders()[1],
        size_limit=args.size_limit,
        device="cpu",
    )
    timing = {
        "gpu": time_evaluations(gpu),
        "cpu": time_evaluations(cpu),
        "gpu_name": _device_name(args.device),
        "cpu_threads": args.cpu_threads,
        "weights": sum(layer.n_weights for layer in gpu.policies.layers),
        "layers": len(gpu.layers),
        "width": args.width,
    }
    (args.out / "timing.json").write_text(json.dumps(timing, indent=2))
    logging.info(
        "one evaluation: GPU %.4f s (cached %.4f), CPU %.4f s (cached %.4f)",
        timing["gpu"]["first_s"],
        timing["gpu"]["cached_s"],
        timing["cpu"]["first_s"],
        timing["cpu"]["cached_s"],
    )
    tag = f"w{args.width}-limit{args.size_limit:g}-b{args.budget}"
    storage = str(args.out / "journal.db")
    seeds = list(range(1, args.seeds + 1))
    for name in [*args.strategies, "round-robin"]:
        frame = run_strategy(
            gpu,
            name,
            seeds if name != "round-robin" else [0],
            budget=args.budget,
            n_init=args.n_init,
            storage=storage,
            size_limit=args.size_limit,
        )
        frame.to_csv(args.out / f"trials-{name}-{tag}.csv.gz", index=False)
    files = sorted(args.out.glob(f"trials-*-{tag}.csv.gz"))
    trials = pd.concat(
        [pd.read_csv(f, dtype={"bits": str}) for f in files],
        ignore_index=True,
    )
    summary = summarise(trials)
    summary.to_csv(args.out / f"summary-{tag}.csv", index=False)
    meta = {
        "size_limit_fraction": args.size_limit,
        "size_limit_bytes": gpu.policies.size_limit,
        "float32_bytes": gpu.policies.float32_bytes,
        "layers": gpu.layers,
        "budget": args.budget,
        "n_init": args.n_init,
        "reference_top1_8bit": gpu.reference.top1,
        "float_top1": gpu.float_accuracy.top1,
        "machine": platform.platform(),
        "torch": torch.__version__,
        "gpu": _device_name(args.device),
    }
    (args.out / f"settings-{tag}.json").write_text(json.dumps(meta, indent=2))
    figures(
        trials,
        gpu,
        args.out,
        f"digits ResNet w{args.width} on {args.device}, size <= {args.size_limit:g} x float32",
        tag,
    )
    print(json.dumps(timing, indent=2))
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
