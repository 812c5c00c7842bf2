"""Costs of the quantization search's building blocks (CPU).

1. The size predicate on ResNet50's 54 quantizable layers (shapes of torchvision's
   ResNet50: 53 convolutions + the classifier, 25.5M weights) at the seed's 10 MB limit:
   time to filter 10^6 raw policies, the valid fraction, and constrained Sobol samples of
   64 and 3,240 policies (the seed's starting and EI sample sizes).
2. One policy evaluation of the digits network: uniform and k-means quantization, without
   and with a short STE fine-tune.

    python benchmarks/quantization_costs.py --out benchmarks/results/quantization/costs.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from gpautotune.problems.quantization import LayerInfo, PolicySpace, digits_problem


def resnet50_layers() -> list[LayerInfo]:
    """Weight shapes of torchvision's ResNet50 (bottleneck blocks 3, 4, 6, 3; expansion 4)."""
    layers = [LayerInfo("conv1", "Conv2d", (64, 3, 7, 7))]
    cin = 64
    for stage, (width, blocks) in enumerate(
        zip((64, 128, 256, 512), (3, 4, 6, 3), strict=True), start=1
    ):
        for b in range(blocks):
            p = f"layer{stage}.{b}"
            layers += [
                LayerInfo(f"{p}.conv1", "Conv2d", (width, cin, 1, 1)),
                LayerInfo(f"{p}.conv2", "Conv2d", (width, width, 3, 3)),
                LayerInfo(f"{p}.conv3", "Conv2d", (4 * width, width, 1, 1)),
            ]
            if b == 0:
                layers.append(LayerInfo(f"{p}.downsample.0", "Conv2d", (4 * width, cin, 1, 1)))
            cin = 4 * width
    return layers + [LayerInfo("fc", "Linear", (1000, 2048))]


def _seconds(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(min(times))


def predicate_costs() -> dict[str, float]:
    layers = resnet50_layers()
    space = PolicySpace.build(layers, size_limit=10 * 2**20)
    raw = space.space.from_unit(np.random.default_rng(0).random((10**6, len(layers))))
    out = {
        "layers": len(layers),
        "weights": sum(x.n_weights for x in layers),
        "limit_bytes": space.size_limit,
        "uniform_8bit_bytes": space.bytes_of(space.to_config(space.uniform(8))),
    }
    out["filter_1e6_s"] = _seconds(lambda: space.space.valid_mask(raw))
    out["valid_fraction"] = float(space.space.valid_mask(raw).mean())
    out["sobol_64_s"] = _seconds(lambda: space.space.sample(64, method="sobol", seed=1))
    out["sobol_3240_s"] = _seconds(
        lambda: space.space.sample(3240, method="sobol", seed=1), repeat=1
    )
    return out


def evaluation_costs(size_limit: float) -> dict[str, dict[str, float]]:
    out = {}
    for method in ("uniform", "kmeans"):
        for steps in (0, 10):
            problem = digits_problem(
                size_limit=size_limit, method=method, finetune_steps=steps, device="cpu"
            )
            configs = problem.space.sample(10, method="random", seed=7)
            times = []
            for config in configs:
                problem.clear_cache()
                t0 = time.perf_counter()
                problem.evaluate(config)
                times.append(time.perf_counter() - t0)
            out[f"{method}_finetune{steps}"] = {
                "median_s": float(np.median(times)),
                "policies": len(configs),
            }
    return out


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/quantization/costs.json"))
    p.add_argument("--size-limit", type=float, default=0.07)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    result = {
        "predicate_resnet50": predicate_costs(),
        "digits_evaluation": evaluation_costs(args.size_limit),
        "threads": args.threads,
        "machine": platform.platform(),
        "torch": torch.__version__,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
