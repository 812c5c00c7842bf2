"""Benchmark: quantization-policy search on the digits network (seed 003, figure 13.5).

For each strategy and seed, search a per-layer bit-width policy at a fixed budget and
record the best accuracy loss (Top-1 points against the uniform 8-bit network); add the
round-robin rule; write per-trial CSVs, a summary (mean and 95% t interval over seeds),
the best-so-far figure with bands and one policy heat map per strategy.

Results of strategies run earlier into the same ``--out`` folder (``trials-<name>-<tag>.csv.gz``
with the same size limit and budget) are merged into the summary, so the GPR strategy
can be added later::

    python benchmarks/quantization.py --strategies random sobol --seeds 10
    # adds gpr, seeds in parallel on local Dask workers (in-memory journals)
    python benchmarks/quantization.py --strategies gpr --seeds 10 --jobs 10
    # on a GPU: the wider network on CUDA, one evaluation timed on the GPU and the CPU
    python benchmarks/quantization.py --device cuda --width 64 --compare-cpu --threads 16 \
        --strategies gpr random --seeds 1 --storage OUT/journal.db --out OUT

Writes ``trials-<strategy>-<tag>.csv.gz``, ``summary-<tag>.csv``, ``settings-<tag>.json``,
the figures ``best_so_far-<tag>.png`` and ``trace-<strategy>-<tag>.png`` (``<tag>``:
``limit<L>-b<B>``, ``w<W>-`` first for another width than 16) and, with
``--compare-cpu``, ``timing.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from gpautotune.analysis import save_figure
from gpautotune.problems.quantization import QuantizationProblem, digits_problem
from gpautotune.quantization import history_frame, mean_ci, plot_best_so_far, plot_policy_trace
from gpautotune.strategies import strategy_options
from gpautotune.tuner import tune

TRIAL_COLUMNS = [
    "strategy",
    "seed",
    "size_limit",
    "budget",
    "number",
    "status",
    "value",
    "top1",
    "size_bytes",
    "mean_bits",
    "duration_s",
    "bits",
]


def time_evaluations(
    problem: QuantizationProblem, n: int = 20, seed: int = 123
) -> dict[str, float]:
    """Median seconds of one policy evaluation: quantizing every layer (cache cleared
    first), and with every layer's quantized weights cached (the usual case in a search
    once bit widths repeat)."""
    configs = problem.space.sample(n, method="random", seed=seed)
    cold, warm = [], []
    for config in configs:
        problem.clear_cache()
        t0 = time.perf_counter()
        problem.evaluate(config)
        cold.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        problem.evaluate(config)
        warm.append(time.perf_counter() - t0)
    return {"first_s": float(np.median(cold)), "cached_s": float(np.median(warm)), "policies": n}


def run_strategy(
    problem: QuantizationProblem,
    name: str,
    seeds: list[int],
    *,
    budget: int,
    n_init: int,
    storage: str | None,
    size_limit: float,
) -> pd.DataFrame:
    """Every trial of ``name`` over ``seeds`` as one table (:data:`TRIAL_COLUMNS`)."""
    options = {"n_init": n_init} if "n_init" in strategy_options(name) else {}
    frames = []
    for seed in seeds:
        t0 = time.perf_counter()
        result = tune(problem, name, budget, seed=seed, strategy_options=options, storage=storage)
        frame = history_frame(result.trials, problem.policies)
        frame["bits"] = [
            "".join(str(row[layer]) for layer in problem.layers) for _, row in frame.iterrows()
        ]
        frame = frame.assign(strategy=name, seed=seed, size_limit=size_limit, budget=budget)
        frames.append(frame[TRIAL_COLUMNS])
        best = frame["value"].min()
        logging.info(
            "%s seed %d: best loss %.2f points, %d trials, %.1f s",
            name,
            seed,
            100 * best,
            len(frame),
            time.perf_counter() - t0,
        )
    return pd.concat(frames, ignore_index=True)


def _one_seed(job: tuple) -> pd.DataFrame:
    """One seed of one strategy on a Dask worker (``--jobs``); torch on one thread."""
    size_limit, width, device, name, seed, budget, n_init = job
    torch.set_num_threads(1)
    problem = digits_problem(size_limit=size_limit, width=width, device=device)
    return run_strategy(
        problem, name, [seed], budget=budget, n_init=n_init, storage=None, size_limit=size_limit
    )


def summarise(trials: pd.DataFrame) -> pd.DataFrame:
    """Per strategy: seeds, mean best loss (points) with its 95% t interval, best top-1, size."""
    rows = []
    for name, group in trials.groupby("strategy", sort=True):
        ok = group[group["status"] == "ok"]
        best = ok.loc[ok.groupby("seed")["value"].idxmin()]
        mean, low, high = mean_ci(100 * best["value"].to_numpy())
        rows.append(
            {
                "strategy": name,
                "seeds": len(best),
                "mean_best_loss_points": round(mean, 3),
                "ci95_low": round(low, 3),
                "ci95_high": round(high, 3),
                "min_best_loss_points": round(100 * best["value"].min(), 3),
                "max_best_loss_points": round(100 * best["value"].max(), 3),
                "mean_best_top1": round(float(best["top1"].mean()), 4),
                "mean_best_size_bytes": round(float(best["size_bytes"].mean()), 1),
                "trials_per_seed": round(len(ok) / max(len(best), 1), 1),
            }
        )
    return pd.DataFrame(rows)


def figures(
    trials: pd.DataFrame, problem: QuantizationProblem, out: Path, title: str, tag: str
) -> None:
    searches = trials[trials["strategy"] != "round-robin"]
    save_figure(plot_best_so_far(searches, title=title), out / f"best_so_far-{tag}.png", dpi=110)
    for name, group in trials.groupby("strategy"):
        first = group[group["seed"] == group["seed"].min()].sort_values("number")
        bits = pd.DataFrame(
            [list(map(int, b)) for b in first["bits"]], columns=problem.layers, index=first.index
        )
        history = pd.concat([first, bits], axis=1)
        fig = plot_policy_trace(
            history,
            problem.layers,
            size_limit=problem.policies.size_limit,
            reference=problem.reference.top1,
            title=f"{name}, seed {first['seed'].iloc[0]}",
        )
        save_figure(fig, out / f"trace-{name}-{tag}.png", dpi=80)


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    return platform.processor()


def compare_devices(args: argparse.Namespace, problem: QuantizationProblem) -> dict:
    """One evaluation timed on ``--device`` and, with the same model, on the CPU."""
    from gpautotune.problems.quantization import DigitsTraining, digits_loaders, digits_model

    model = digits_model(DigitsTraining(width=args.width), device=args.device).cpu()
    cpu = QuantizationProblem(model, digits_loaders()[1], size_limit=args.size_limit, device="cpu")
    timing = {
        "gpu": time_evaluations(problem),
        "cpu": time_evaluations(cpu),
        "gpu_name": _device_name(args.device),
        "cpu_threads": args.threads,
        "weights": sum(layer.n_weights for layer in problem.policies.layers),
        "layers": len(problem.layers),
        "width": args.width,
    }
    (args.out / "timing.json").write_text(json.dumps(timing, indent=2))
    return timing


def search(args: argparse.Namespace, problem: QuantizationProblem, name: str, tag: str) -> None:
    """Every seed of one strategy (round-robin: one run), its trials written to ``out``."""
    seeds = [0] if name == "round-robin" else list(range(1, args.seeds + 1))
    if args.jobs > 1 and name != "round-robin":
        from gpautotune.parallel import dask_client

        jobs = [
            (args.size_limit, args.width, args.device, name, s, args.budget, args.n_init)
            for s in seeds
        ]
        # Dask's worker processes are spawned, not forked: this process already ran
        # autograd (training, timing), and a forked child could not (every GP fit fails).
        with dask_client(None, args.jobs) as client:
            frames = client.gather(client.map(_one_seed, jobs, pure=False))
        frame = pd.concat(frames, ignore_index=True)
    else:
        frame = run_strategy(
            problem,
            name,
            seeds,
            budget=args.budget,
            n_init=args.n_init,
            storage=args.storage or None,
            size_limit=args.size_limit,
        )
    frame.to_csv(args.out / f"trials-{name}-{tag}.csv.gz", index=False)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--strategies", nargs="+", default=["random", "sobol"])
    p.add_argument("--seeds", type=int, default=10, help="repetitions (seeds 1..N)")
    p.add_argument("--budget", type=int, default=245)
    p.add_argument("--n-init", type=int, default=64)
    p.add_argument(
        "--size-limit", type=float, default=0.07, help="fraction of the float32 weight size"
    )
    p.add_argument("--width", type=int, default=16, help="first-stage channels (64: 2.77M weights)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--compare-cpu", action="store_true", help="time one evaluation on the CPU too")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument(
        "--jobs", type=int, default=1, help="seeds run on local Dask workers (in-memory journals)"
    )
    p.add_argument(
        "--storage",
        default="results/quantization-bench.db",
        help="journal (resumable); '' for memory",
    )
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/quantization"))
    return p


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: run with --device cpu")
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.storage:
        Path(args.storage).parent.mkdir(parents=True, exist_ok=True)
    problem = digits_problem(size_limit=args.size_limit, width=args.width, device=args.device)
    timing = time_evaluations(problem)
    logging.info(
        "one policy evaluation: %.4f s first, %.4f s cached", timing["first_s"], timing["cached_s"]
    )
    if args.compare_cpu:
        logging.info("timing on two devices: %s", compare_devices(args, problem))
    wide = f"w{args.width}-" if args.width != 16 else ""
    tag = f"{wide}limit{args.size_limit:g}-b{args.budget}"
    for name in [*args.strategies, "round-robin"]:
        search(args, problem, name, tag)
    files = sorted(args.out.glob(f"trials-*-{tag}.csv.gz"))
    trials = pd.concat([pd.read_csv(f, dtype={"bits": str}) for f in files], ignore_index=True)
    summary = summarise(trials)
    summary.to_csv(args.out / f"summary-{tag}.csv", index=False)
    meta = {
        "size_limit_fraction": args.size_limit,
        "size_limit_bytes": problem.policies.size_limit,
        "float32_bytes": problem.policies.float32_bytes,
        "layers": problem.layers,
        "budget": args.budget,
        "n_init": args.n_init,
        "width": args.width,
        "device": _device_name(args.device) if args.compare_cpu else args.device,
        "threads": args.threads,
        "reference_top1_8bit": problem.reference.top1,
        "float_top1": problem.float_accuracy.top1,
        "evaluation_time": timing,
        "machine": platform.platform(),
        "torch": torch.__version__,
    }
    (args.out / f"settings-{tag}.json").write_text(json.dumps(meta, indent=2))
    wider = f"digits ResNet w{args.width} on {args.device}" if wide else "digits ResNet"
    title = f"{wider}, size <= {args.size_limit:g} x float32, budget {args.budget}"
    figures(trials, problem, args.out, title, tag)
    print(summary.to_string(index=False))


if __name__ == "__main__":
    main()
