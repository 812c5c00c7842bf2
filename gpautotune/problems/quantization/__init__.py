"""Mixed-precision weight quantization policies (seed 003, chapter 13) as a problem.

Importing this package imports PyTorch; ``gpautotune.problems`` does not import it. The
search entry point (:func:`gpautotune.quantization.search_policy`) is one layer up: a
problem never imports the tuner or the strategies.
"""

from gpautotune.problems.quantization._accuracy import Accuracy, evaluate_accuracy, resolve_device
from gpautotune.problems.quantization._digits import (
    DigitsResNet,
    DigitsTraining,
    cache_dir,
    digits_data,
    digits_loaders,
    digits_model,
)
from gpautotune.problems.quantization._factory import digits_problem
from gpautotune.problems.quantization._finetune import finetune_ste
from gpautotune.problems.quantization._history import HISTORY_COLUMNS, bits_column, history_frame
from gpautotune.problems.quantization._layers import LayerInfo, find_layers, parameter_names
from gpautotune.problems.quantization._packed import PackedLayer, PackedModel, load_packed
from gpautotune.problems.quantization._plots import (
    best_so_far,
    mean_ci,
    plot_best_so_far,
    plot_policy_trace,
)
from gpautotune.problems.quantization._policy import (
    BitsSpec,
    PolicySize,
    PolicySpace,
    resolve_size_limit,
)
from gpautotune.problems.quantization._problem import QuantizationProblem, model_fingerprint
from gpautotune.problems.quantization._quantize import (
    QuantizedWeight,
    pack_codes,
    quantize_weight,
    unpack_codes,
    weight_bytes,
)
from gpautotune.problems.quantization._quantizer import Quantizer, WorkingModel

__all__ = [
    "HISTORY_COLUMNS",
    "Accuracy",
    "BitsSpec",
    "DigitsResNet",
    "DigitsTraining",
    "LayerInfo",
    "PackedLayer",
    "PackedModel",
    "PolicySize",
    "PolicySpace",
    "QuantizationProblem",
    "QuantizedWeight",
    "Quantizer",
    "WorkingModel",
    "best_so_far",
    "bits_column",
    "cache_dir",
    "digits_data",
    "digits_loaders",
    "digits_model",
    "digits_problem",
    "evaluate_accuracy",
    "find_layers",
    "history_frame",
    "load_packed",
    "finetune_ste",
    "mean_ci",
    "model_fingerprint",
    "pack_codes",
    "parameter_names",
    "plot_best_so_far",
    "plot_policy_trace",
    "quantize_weight",
    "resolve_device",
    "resolve_size_limit",
    "unpack_codes",
    "weight_bytes",
]
