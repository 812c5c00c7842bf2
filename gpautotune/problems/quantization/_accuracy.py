"""Top-1 / Top-5 accuracy of a classifier on a data loader, and device resolution."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gpautotune.exceptions import ConfigError

__all__ = ["Accuracy", "check_outputs", "evaluate_accuracy", "resolve_device", "split_batch"]

#: Top-5 accuracy is reported only for more than this many classes.
TOP5_MIN_CLASSES = 5


@dataclass(frozen=True)
class Accuracy:
    """Accuracy of a classifier on ``n`` examples (fractions in [0, 1]).

    Attributes:
        top1: fraction whose highest logit is the label.
        top5: fraction whose label is among the five highest logits (``None`` with
            five classes or fewer, where it is trivially 1).
        n: number of examples.
    """

    top1: float
    top5: float | None
    n: int

    def metric(self, name: str) -> float:
        """``"top1"`` or ``"top5"``."""
        if name == "top1":
            return self.top1
        if name == "top5" and self.top5 is not None:
            return self.top5
        raise ConfigError(
            "accuracy metric must be 'top1' or 'top5' "
            f"(top5 needs > {TOP5_MIN_CLASSES} classes), got {name!r}"
        )


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``None`` picks CUDA when available, else the CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ConfigError(f"device {device!r} is not a torch device ({exc})") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {device!r} asked for CUDA, but this PyTorch sees no CUDA GPU; use device='cpu'"
        )
    return resolved


def split_batch(batch: Any, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """``(inputs, targets)`` of a loader batch, moved to ``device``."""
    if not isinstance(batch, (tuple, list)) or len(batch) < 2:
        raise ConfigError("data loaders must yield (inputs, targets) batches")
    x, y = batch[0], batch[1]
    if not isinstance(y, torch.Tensor):
        raise ConfigError(
            f"targets must be a tensor of class indices, got a {type(y).__name__}; "
            "the loader must yield (inputs, targets) with targets a torch tensor"
        )
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def check_outputs(logits: Any, y: torch.Tensor) -> None:
    """Refuse what top-k accuracy cannot be computed from: logits that are not
    ``(batch, classes)``, targets that are not integer class indices ``(batch,)`` within
    ``0 .. classes - 1`` (one-hot or soft targets, sequence outputs, regression outputs).
    """
    expected = (
        "the model must return logits of shape (batch, classes) and the loader targets of "
        "integer class indices of shape (batch,)"
    )
    if not isinstance(logits, torch.Tensor):
        raise ConfigError(f"{expected}; the model returned a {type(logits).__name__}")
    got = f"got logits {tuple(logits.shape)} and targets {tuple(y.shape)} {y.dtype}"
    integer = not (y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool)
    if logits.dim() != 2 or logits.shape[1] < 1 or y.dim() != 1 or not integer:
        raise ConfigError(f"{expected}; {got}")
    if logits.shape[0] != y.shape[0]:
        raise ConfigError(f"{expected}, with one target per row of logits; {got}")
    if y.numel() and not (0 <= int(y.min()) and int(y.max()) < logits.shape[1]):
        raise ConfigError(
            f"targets must be class indices in 0..{logits.shape[1] - 1} (the model returns "
            f"{logits.shape[1]} logits); got labels {int(y.min())}..{int(y.max())}"
        )


@torch.inference_mode()
def evaluate_accuracy(
    model: nn.Module, loader: Iterable[Any], device: torch.device, *, check: bool = True
) -> Accuracy:
    """Top-1 (and Top-5 with more than five classes) accuracy of ``model`` in eval mode.

    Args:
        model: a classifier returning logits of shape ``(batch, classes)``.
        loader: batches ``(inputs, targets)``, targets integer class indices of shape
            ``(batch,)``.
        device: where to evaluate.
        check: check every batch's logits and targets (:func:`check_outputs`); a search
            checks once, at its first evaluation, and not at every policy.

    Raises:
        ConfigError: logits or targets of another shape or dtype, labels out of range, or
            a loader that yields no examples.
    """
    model.eval()
    hits1 = hits5 = 0
    total, classes = 0, 0
    for batch in loader:
        x, y = split_batch(batch, device)
        logits = model(x)
        if check:
            check_outputs(logits, y)
        classes = logits.shape[-1]
        top = logits.topk(min(5, classes), dim=-1).indices
        match = top == y[:, None]
        hits1 += int(match[:, 0].sum())
        hits5 += int(match.any(dim=-1).sum())
        total += int(y.shape[0])
    if total == 0:
        raise ConfigError("the validation loader yielded no examples")
    top5 = hits5 / total if classes > TOP5_MIN_CLASSES else None
    return Accuracy(hits1 / total, top5, total)
