"""The registered problem ``quantization-digits`` (typed options for YAML and the CLI)."""

from __future__ import annotations

from gpautotune.problems.quantization._digits import DigitsTraining, digits_loaders, digits_model
from gpautotune.problems.quantization._problem import QuantizationProblem
from gpautotune.problems.quantization._quantizer import Quantizer

__all__ = ["digits_problem"]


def digits_problem(
    size_limit: float | None = 0.07,
    bits_low: int = 1,
    bits_high: int = 8,
    method: str = "uniform",
    finetune_steps: int = 0,
    metric: str = "top1",
    width: int = 16,
    seed: int = 0,
    device: str | None = None,
    size_weight: float = 0.0,
) -> QuantizationProblem:
    """Quantize the digits demo network (:func:`~._digits.digits_model`, trained and cached).

    Args:
        size_limit: bytes (int) or a fraction of the float32 weight size (0.07 of 32 bits
            is 2.24 bits per weight on average, scales included; about 0.24% of the raw
            policies fit), or None for no limit (with ``size_weight``).
        bits_low: fewest bits of any layer.
        bits_high: most bits of any layer.
        method: ``"uniform"`` or ``"kmeans"``.
        finetune_steps: STE fine-tune steps per policy (0: none).
        metric: ``"top1"`` or ``"top5"``.
        width: channels of the network's first stage (16 -> 174k weights).
        seed: the model's training seed (and the fine-tune's).
        device: ``"cpu"`` or ``"cuda"`` (default CUDA when available).
        size_weight: weight of the size term in the objective (seed 003 §13.6.3:
            accuracy loss + ``size_weight`` x size / 8-bit size).
    """
    model = digits_model(DigitsTraining(width=width, seed=seed), device=device)
    train, val = digits_loaders(seed=seed)
    quantizer = Quantizer(method=method, finetune_steps=finetune_steps, seed=seed)
    return QuantizationProblem(
        model,
        val,
        size_limit=size_limit,
        bits=range(bits_low, bits_high + 1),
        quantizer=quantizer,
        train_loader=train if finetune_steps else None,
        metric=metric,
        device=device,
        name="quantization-digits",
        size_weight=size_weight,
    )
