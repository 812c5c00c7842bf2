"""Mixed-precision weight quantization policies, as a library (seed 003, chapter 13).

Example::

    from gpautotune.quantization import search_policy

    result = search_policy(model, val_loader, size_limit=0.09, budget=245, strategy="gpr")
    print(result.policy, result.size_bytes, result.accuracy)
    small = result.apply(model)

Importing this module imports PyTorch.
"""

from gpautotune.problems.quantization import (
    Accuracy,
    DigitsResNet,
    LayerInfo,
    PolicySpace,
    QuantizationProblem,
    QuantizedWeight,
    Quantizer,
    digits_loaders,
    digits_model,
    digits_problem,
    evaluate_accuracy,
    find_layers,
    quantize_weight,
    weight_bytes,
)
from gpautotune.problems.quantization._plots import (
    best_so_far,
    mean_ci,
    plot_best_so_far,
    plot_policy_trace,
)
from gpautotune.problems.quantization._search import (
    PolicyResult,
    history_frame,
    round_robin_policy,
    search_policy,
)

__all__ = [
    "Accuracy",
    "DigitsResNet",
    "LayerInfo",
    "PolicyResult",
    "PolicySpace",
    "QuantizationProblem",
    "QuantizedWeight",
    "Quantizer",
    "best_so_far",
    "digits_loaders",
    "digits_model",
    "digits_problem",
    "evaluate_accuracy",
    "find_layers",
    "history_frame",
    "mean_ci",
    "plot_best_so_far",
    "plot_policy_trace",
    "quantize_weight",
    "round_robin_policy",
    "search_policy",
    "weight_bytes",
]
