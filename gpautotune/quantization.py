"""Mixed-precision weight quantization policies, as a library (seed 003, chapter 13).

Example::

    from gpautotune.quantization import load_packed, search_policy

    result = search_policy(model, val_loader, size_limit=0.09, budget=245, strategy="gpr")
    print(result.policy, result.size_bytes, result.accuracy)
    small = result.apply(model)          # float32, computing with the quantized weights
    packed = result.pack(model)          # the compact form: packed codes and scales
    packed.save("model.gpq")             # packed.weight_bytes == result.size_bytes
    same = load_packed("model.gpq").unpack(model)

The API layer above the problem: :func:`search_policy` builds a
:class:`~gpautotune.problems.quantization.QuantizationProblem` and runs
:func:`gpautotune.tune` on it (same journal, resume and progress callback as every other
run). Importing this module imports PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import torch
from torch import nn

from gpautotune.exceptions import GPAutotuneError
from gpautotune.problems.quantization import (
    Accuracy,
    BitsSpec,
    DigitsResNet,
    LayerInfo,
    PackedModel,
    PolicySpace,
    QuantizationProblem,
    QuantizedWeight,
    Quantizer,
    best_so_far,
    bits_column,
    digits_loaders,
    digits_model,
    digits_problem,
    evaluate_accuracy,
    find_layers,
    history_frame,
    load_packed,
    mean_ci,
    plot_best_so_far,
    plot_policy_trace,
    quantize_weight,
    weight_bytes,
)
from gpautotune.strategies import strategy_options
from gpautotune.strategies.round_robin import round_robin_index
from gpautotune.trial import Trial
from gpautotune.tuner import tune

__all__ = [
    "Accuracy",
    "DigitsResNet",
    "LayerInfo",
    "PackedModel",
    "PolicyResult",
    "PolicySpace",
    "QuantizationProblem",
    "QuantizedWeight",
    "Quantizer",
    "best_so_far",
    "bits_column",
    "digits_loaders",
    "digits_model",
    "digits_problem",
    "evaluate_accuracy",
    "find_layers",
    "history_frame",
    "load_packed",
    "mean_ci",
    "plot_best_so_far",
    "plot_policy_trace",
    "quantize_weight",
    "round_robin_policy",
    "search_policy",
    "weight_bytes",
]


@dataclass(frozen=True, eq=False)
class PolicyResult:
    """The best policy a search found.

    Attributes:
        policy: layer (module) name -> bits.
        size_bytes: its exact storage (packed codes + float32 scales).
        accuracy: its accuracy (the search's metric) on the validation loader.
        reference_accuracy: the uniform 8-bit network's accuracy.
        history: every trial (:func:`history_frame`): number, status, value, top1, ...
            then the bits of each layer in a column named by the layer
            (``result.history[bits_column(name)]``: ``bits.NAME`` where a layer's name is
            a fixed column's, such as ``value``).
        quantizer: how the policy is applied (method, fine-tune).
        problem: the problem searched (its space, layers and device).
    """

    policy: dict[str, int]
    size_bytes: int
    accuracy: float
    reference_accuracy: float
    history: pd.DataFrame = field(repr=False)
    quantizer: Quantizer = field(repr=False)
    problem: QuantizationProblem = field(repr=False, compare=False)

    @property
    def accuracy_loss(self) -> float:
        """``reference_accuracy - accuracy`` (the minimised objective without a size weight)."""
        return self.reference_accuracy - self.accuracy

    def apply(self, model: nn.Module, *, device: str | torch.device | None = None) -> nn.Module:
        """A copy of ``model`` with the policy's quantized weights (``model`` is unchanged),
        in float32: it computes as the quantized model does, but its ``state_dict`` is as
        large as the original's (see :meth:`pack` for the compact form).

        The fine-tune, if the search used one, is repeated with the same seed and loader.
        """
        return self._quantize(model, device)[0]

    def pack(self, model: nn.Module, *, device: str | torch.device | None = None) -> PackedModel:
        """The compact form of the quantized ``model``: each layer's codes packed to its
        bit width and its float32 scales, the other tensors as they are. Its
        ``weight_bytes`` is :attr:`size_bytes`; ``save(path)`` writes it,
        :func:`load_packed` reads it back and ``unpack(model)`` rebuilds the model."""
        quantized, weights = self._quantize(model, device)
        return PackedModel.of(quantized, weights)

    def _quantize(
        self, model: nn.Module, device: str | torch.device | None
    ) -> tuple[nn.Module, dict[str, QuantizedWeight]]:
        device = torch.device(device) if device is not None else self.problem.device
        return self.quantizer.quantize(
            model, self.policy, train_loader=self.problem.train_loader, device=device
        )


def search_policy(
    model: nn.Module,
    val_loader: Iterable[Any],
    *,
    size_limit: int | float | None,
    bits: BitsSpec = range(1, 9),
    budget: int = 245,
    n_init: int = 64,
    strategy: str = "gpr",
    train_loader: Iterable[Any] | None = None,
    finetune_steps: int = 0,
    device: str | torch.device | None = None,
    storage: Any = None,
    seed: int | None = None,
    layers: Sequence[str] | None = None,
    method: str = "uniform",
    metric: str = "top1",
    callback: Callable[[Trial, Any], None] | None = None,
    size_weight: float = 0.0,
    progress: bool = False,
) -> PolicyResult:
    """Search a per-layer weight bit-width policy that keeps accuracy under a size limit
    (or trades accuracy for size: ``size_weight``).

    Args:
        model: a trained classifier: an ``nn.Module`` returning logits of shape
            ``(batch, classes)``.
        val_loader: validation batches ``(inputs, targets)``, targets integer class
            indices of shape ``(batch,)``; re-iterable (a list or a DataLoader: it is read
            once per policy).
        size_limit: bytes (int), a fraction in (0, 1) of the float32 weight size (float:
            ``1.0`` or ``2048.0`` are refused), or None for no limit (size in the
            objective only).
        bits: allowed bit widths, a list of ints within 1..16 for all layers (``[2, 4,
            8]``, ``range(1, 9)``), or a mapping layer name -> such a list.
        budget: policies evaluated.
        n_init: initial (space-filling) policies, for strategies that take ``n_init``.
        strategy: a registered strategy name (``gpr``, ``sobol``, ``random``, ``round-robin``).
        train_loader: training batches for the STE fine-tune.
        finetune_steps: fine-tune steps per policy (0: none).
        device: where to evaluate (default CUDA when available).
        storage: a journal path (resumable) or :class:`~gpautotune.storage.Journal`. A
            run is keyed by the model's fingerprint and the settings; the digest of the
            validation data (and of the fine-tune's batches) is stored with it, and
            resuming it on other data is refused (:class:`~gpautotune.exceptions.StorageError`):
            give another journal.
        seed: the strategy's seed; also seeds the fine-tune (0 when None).
        layers: module names to quantize (default every Conv*d and Linear); of layers
            sharing one weight tensor (tied weights), name only one.
        method: ``"uniform"`` or ``"kmeans"``.
        metric: ``"top1"`` or ``"top5"`` for the objective.
        callback: ``callback(trial, run)`` after each stored trial (progress).
        size_weight: weight of the size term in the objective (seed 003 §13.6.3;
            :class:`~gpautotune.problems.quantization.QuantizationProblem`); 0 minimises
            the accuracy loss only.
        progress: draw a progress bar (policies evaluated, best objective) on standard
            error; otherwise each trial is logged at INFO level (``gpautotune.tuner``).

    Raises:
        ConfigError: a bad argument, or logits or targets of another shape or dtype.
        StorageError: the run in ``storage`` was made from other data.
        GPAutotuneError: no policy could be evaluated.
    """
    quantizer = Quantizer(method=method, finetune_steps=finetune_steps, seed=seed or 0)
    problem = QuantizationProblem(
        model,
        val_loader,
        size_limit=size_limit,
        bits=bits,
        layers=layers,
        quantizer=quantizer,
        train_loader=train_loader,
        metric=metric,
        device=device,
        size_weight=size_weight,
    )
    options = {"n_init": n_init} if "n_init" in strategy_options(strategy) else {}
    result = tune(
        problem,
        strategy,
        budget,
        storage=storage,
        seed=seed,
        strategy_options=options,
        callback=callback,
        progress=progress,
    )
    best = result.best
    if best is None:
        raise GPAutotuneError(
            f"no policy was evaluated successfully in {len(result.trials)} trials"
        )
    m = best.measurement.metrics
    return PolicyResult(
        policy=problem.policies.to_policy(best.config),
        size_bytes=int(m["size_bytes"]),
        accuracy=float(m[metric]),
        reference_accuracy=problem.reference.metric(metric),
        history=history_frame(result.trials, problem.policies),
        quantizer=quantizer,
        problem=problem,
    )


def round_robin_policy(
    model: nn.Module,
    *,
    size_limit: int | float,
    bits: BitsSpec = range(1, 9),
    layers: Sequence[str] | None = None,
    method: str = "uniform",
) -> dict[str, int]:
    """HAQ's rule: from the most bits everywhere, lower layer 1, 2, ... round-robin until
    the policy fits (:func:`gpautotune.strategies.round_robin.round_robin_index`)."""
    policies = PolicySpace.build(
        find_layers(model, layers), size_limit=size_limit, bits=bits, method=method
    )
    index = round_robin_index(policies.space)
    return policies.to_policy(policies.space.to_configs(index)[0])
