"""The mixed-precision quantization problem: a policy in, its accuracy loss out."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

import torch
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement, Status
from gpautotune.problems._base import Problem
from gpautotune.problems.quantization._accuracy import Accuracy, evaluate_accuracy, resolve_device
from gpautotune.problems.quantization._digest import (
    combine_digests,
    model_fingerprint,
    train_digest,
    validation_digest,
)
from gpautotune.problems.quantization._finetune import seeded_batches
from gpautotune.problems.quantization._layers import find_layers
from gpautotune.problems.quantization._policy import BitsSpec, PolicySpace, check_size_limit
from gpautotune.problems.quantization._quantizer import Quantizer, WorkingModel
from gpautotune.space import Config

__all__ = ["QuantizationProblem", "check_objective", "model_fingerprint"]

_log = logging.getLogger(__name__)
REFERENCE_BITS = 8


def check_objective(size_limit: object, size_weight: float) -> None:
    """Refuse a bad size limit, a negative size weight, or neither a limit nor a weight
    (cheap: factories call it before building their model)."""
    check_size_limit(size_limit)
    if not size_weight >= 0.0:
        raise ConfigError(f"size_weight must be >= 0, got {size_weight!r}")
    if size_limit is None and size_weight == 0.0:
        raise ConfigError(
            "give a size_limit, a positive size_weight (size in the objective), or both"
        )


def _require_reiterable(loader: Iterable[Any], what: str) -> None:
    """Every policy reads the loader again: a one-pass iterator would be empty after one."""
    if isinstance(loader, Iterator):
        raise ConfigError(
            f"{what} is a one-pass iterator or generator ({type(loader).__name__}), but it is "
            "read once per policy; give a re-iterable loader: a list of batches or a DataLoader"
        )


class QuantizationProblem(Problem):
    """Choose a weight bit width per layer; minimise the accuracy loss under a size limit,
    or a weighted sum of accuracy loss and size.

    The objective of a policy ``b`` is ``A_8 - A(b)``: the accuracy (``metric``) of the
    uniform 8-bit network minus that of the network quantized with ``b`` (optionally after
    a short STE fine-tune), on ``val_loader``. A policy whose size
    (:class:`~._policy.PolicySpace`) exceeds the limit is never evaluated: it returns an
    ``invalid`` measurement at once.

    Size in the objective (seed 003 §13.6.3, "Optimizing Accuracy and Weight": the total
    weight size added to the metric, the size limit and its round-robin rule removed):
    with ``size_weight = w > 0`` the objective is::

        A_8 - A(b) + w · S(b) / S_8

    ``S_8`` being the uniform 8-bit network's size, so ``w`` is the accuracy traded for
    the whole 8-bit size (``w = 0.1``: halving the size is worth 0.05 of accuracy). The
    seed gives no formula or weight; this linear form keeps the 8-bit network at ``w``
    and an accuracy-neutral halving of the size at ``w / 2``. ``size_limit=None`` drops
    the limit (every policy is valid); a limit may also be kept beside the weight.

    The run's key holds the model's fingerprint (:func:`~._digest.model_fingerprint`);
    the data's digest (:meth:`data_digest`) is stored beside it, so that a journal's run
    resumed on other validation data (or other fine-tune batches) is refused.

    Args:
        model: a trained classifier: an ``nn.Module`` returning logits of shape
            ``(batch, classes)``.
        val_loader: validation batches ``(inputs, targets)``, targets integer class
            indices of shape ``(batch,)``; re-iterable (a list or a DataLoader: it is read
            once per policy).
        size_limit: bytes (int), a fraction in (0, 1) of the quantizable weights' float32
            size (float), or None for no limit (then ``size_weight`` must be positive).
        bits: allowed bit widths (a list of ints within 1..16), for every layer, or a
            mapping layer name -> such a list (other layers: 1..8).
        layers: module names to quantize (default every ``Conv*d`` and ``Linear``); of
            layers sharing one weight tensor (tied weights), name only one.
        quantizer: method and fine-tune settings (default: uniform, no fine-tune).
        train_loader: training batches for the fine-tune.
        metric: ``"top1"`` or ``"top5"`` (more than five classes) for the objective.
        device: ``"cpu"``, ``"cuda"``, ... (default CUDA when available).
        name: the problem's name in the journal.
        size_weight: ``w`` of the size term (0: accuracy loss only).

    Raises:
        ConfigError: a negative ``size_weight``, or neither a limit nor a size weight; a
            bad ``size_limit``, ``bits`` or ``layers``; a model that is not an
            ``nn.Module``; logits or targets of another shape or dtype (checked once, on
            the float model); a loader that can be iterated only once (a generator or
            iterator).
    """

    name = "quantization"

    def __init__(
        self,
        model: nn.Module,
        val_loader: Iterable[Any],
        *,
        size_limit: int | float | None,
        bits: BitsSpec = range(1, 9),
        layers: Sequence[str] | None = None,
        quantizer: Quantizer | None = None,
        train_loader: Iterable[Any] | None = None,
        metric: str = "top1",
        device: str | torch.device | None = None,
        name: str | None = None,
        size_weight: float = 0.0,
    ) -> None:
        check_objective(size_limit, size_weight)
        _require_reiterable(val_loader, "val_loader")
        if train_loader is not None:
            _require_reiterable(train_loader, "train_loader")
        self.size_weight = float(size_weight)
        self.quantizer = quantizer or Quantizer()
        self.policies = PolicySpace.build(
            find_layers(model, layers),
            size_limit=size_limit,
            bits=bits,
            method=self.quantizer.method,
        )
        self.space = self.policies.space
        self.reference_bytes = self.policies.bytes_of(
            self.policies.to_config(self.policies.uniform(REFERENCE_BITS))
        )
        self.device = resolve_device(device)
        self.val_loader, self.train_loader, self.metric = val_loader, train_loader, metric
        self.name = name or self.name
        self.fingerprint = model_fingerprint(model)
        self._work = WorkingModel(
            model,
            [layer.name for layer in self.policies.layers],
            self.quantizer,
            self.device,
            train_loader,
        )
        # checks the model's logits and the loader's targets once, before any policy
        self.float_accuracy = evaluate_accuracy(self._work.model, val_loader, self.device)
        self._data_digest: str | None = None
        self.reference = self._accuracy(self.policies.uniform(REFERENCE_BITS))
        self.reference.metric(metric)  # a bad metric fails here, not at every evaluation
        self.evaluations = 0
        _log.info(
            "quantization problem: %d layers, limit %s of %d float32 bytes, size weight %g,"
            " 8-bit %s %.4f",
            len(self.policies.layers),
            self.policies.size_limit,
            self.policies.float32_bytes,
            self.size_weight,
            metric,
            self.reference.metric(metric),
        )

    @property
    def layers(self) -> list[str]:
        """Module names of the quantized layers, in order."""
        return [layer.name for layer in self.policies.layers]

    def clear_cache(self) -> None:
        """Drop the cached quantized layer weights (frees memory; results do not change)."""
        self._work.clear_cache()

    def _accuracy(self, policy: dict[str, int]) -> Accuracy:
        self._work.load(policy)
        return evaluate_accuracy(self._work.model, self.val_loader, self.device, check=False)

    def data_digest(self) -> str:
        """A digest of the validation examples (in any order) and, with a fine-tune, of the
        training batches it reads (in order, with its seed).

        The run stores it beside its key: resuming the run on other data is refused,
        where it would have mixed accuracies measured on two datasets. Computed once, at
        the cost of one pass over the validation data (and ``finetune_steps`` batches).
        """
        if self._data_digest is None:
            digest = validation_digest(self.val_loader)
            q = self.quantizer
            if q.finetune_steps and self.train_loader is not None:
                with seeded_batches(self.train_loader, q.seed) as batches:
                    train = train_digest(islice(batches, q.finetune_steps))
                digest = combine_digests(digest, train)
            self._data_digest = digest
        return self._data_digest

    def evaluate(self, config: Config) -> Measurement:
        try:
            index = self.space.to_index([config])
        except (ConfigError, ValueError) as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        size = int(self.policies.sizes(index)[0])
        if not self.space.valid_mask(index)[0]:
            return Measurement.failure(
                Status.INVALID,
                f"size {size} bytes exceeds the limit of {self.policies.size_limit} bytes",
                size_bytes=size,
            )
        self.evaluations += 1
        policy = self.policies.to_policy(config)
        acc = self._accuracy(policy)
        loss = self.reference.metric(self.metric) - acc.metric(self.metric)
        fraction = size / self.reference_bytes
        return Measurement.success(
            loss + self.size_weight * fraction,
            top1=acc.top1,
            top5=acc.top5,
            size_bytes=size,
            mean_bits=self.policies.mean_bits(config),
            accuracy_loss=loss,
            size_fraction=fraction,
        )

    def describe(self) -> dict[str, Any]:
        q = self.quantizer
        return {
            "name": self.name,
            "model": self.fingerprint,
            **self.policies.describe(),
            "metric": self.metric,
            # only when used, so that earlier runs keep their keys
            **({"size_weight": self.size_weight} if self.size_weight else {}),
            "finetune_steps": q.finetune_steps,
            "finetune_lr": q.finetune_lr,
            "finetune_seed": q.seed,
        }
