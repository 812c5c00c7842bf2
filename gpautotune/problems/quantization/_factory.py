"""The registered problem ``quantization-digits`` (typed options for YAML and the CLI)."""

from __future__ import annotations

from gpautotune.problems.quantization._digits import (
    DigitsResNet,
    DigitsTraining,
    digits_loaders,
    digits_model,
)
from gpautotune.problems.quantization._layers import find_layers
from gpautotune.problems.quantization._policy import PolicySpace, check_bit_widths
from gpautotune.problems.quantization._problem import QuantizationProblem, check_objective
from gpautotune.problems.quantization._quantizer import Quantizer

__all__ = ["digits_problem"]


def digits_problem(
    size_limit: int | float | None = 0.07,
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
        size_limit: bytes (int) or a fraction in (0, 1) of the float32 weight size (float:
            0.07 of 32 bits is 2.24 bits per weight on average, scales included; about
            0.24% of the raw policies fit), or None for no limit (with ``size_weight``).
        bits_low: fewest bits of any layer.
        bits_high: most bits of any layer.
        method: ``"uniform"`` or ``"kmeans"``.
        finetune_steps: STE fine-tune steps per policy (0: none).
        metric: ``"top1"`` or ``"top5"``.
        width: channels of the network's first stage (16 -> 174k weights), >= 1.
        seed: the model's training seed (and the fine-tune's).
        device: ``"cpu"`` or ``"cuda"`` (default CUDA when available).
        size_weight: weight of the size term in the objective (seed 003 §13.6.3:
            accuracy loss + ``size_weight`` x size / 8-bit size).

    Raises:
        ConfigError: a bad option, or a size limit below the smallest policy (every layer
            at ``bits_low``): both refused before the model is trained or loaded.
    """
    # the options are checked before the model is trained (seconds) or loaded
    check_objective(size_limit, size_weight)
    bits = check_bit_widths(range(bits_low, bits_high + 1), f"bits {bits_low}..{bits_high}")
    quantizer = Quantizer(method=method, finetune_steps=finetune_steps, seed=seed)
    training = DigitsTraining(width=width, seed=seed)
    # the size limit needs only the layers' shapes: an untrained network of the same
    # architecture refuses one below the smallest policy before any training
    PolicySpace.build(
        find_layers(DigitsResNet(training.width, training.blocks)),
        size_limit=size_limit,
        bits=bits,
        method=quantizer.method,
    )
    model = digits_model(training, device=device)
    train, val = digits_loaders(seed=seed)
    return QuantizationProblem(
        model,
        val,
        size_limit=size_limit,
        bits=bits,
        quantizer=quantizer,
        train_loader=train if finetune_steps else None,
        metric=metric,
        device=device,
        name="quantization-digits",
        size_weight=size_weight,
    )
