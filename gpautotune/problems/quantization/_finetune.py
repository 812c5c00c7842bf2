"""A short quantization-aware fine-tune with the straight-through estimator (STE).

Each step quantizes the float ("master") weights ``w`` of the quantized layers to
``Q(w)``, computes the cross-entropy loss and its gradient at ``Q(w)``, restores ``w``
and applies the gradient to it: ``w <- w - lr * dL/dQ(w)``, i.e. ``dQ/dw`` is taken as
the identity (Bengio et al. 2013; HAQ fine-tunes its quantized networks this way).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization._accuracy import split_batch
from gpautotune.problems.quantization._quantize import quantize_weight

__all__ = ["finetune_ste", "seeded_batches"]

_log = logging.getLogger(__name__)


def _batches(loader: Iterable[Any]) -> Iterator[Any]:
    while True:
        empty = True
        for batch in loader:
            empty = False
            yield batch
        if empty:
            raise ConfigError("the training loader yielded no batches")


@contextmanager
def seeded_batches(
    loader: Iterable[Any], seed: int, device: torch.device | None = None
) -> Iterator[Iterator[Any]]:
    """The loader's batches, cycled, with the loader's shuffling seeded by ``seed``.

    Seeds the global torch RNG (forked: restored on exit) and a DataLoader's own
    ``generator`` (its state restored on exit), so the same seed reads the same batches
    every time: the fine-tune reads them, and the problem's data digest hashes them.
    """
    cuda = [device.index or 0] if device is not None and device.type == "cuda" else []
    generator = getattr(loader, "generator", None)  # a DataLoader's own shuffling generator
    saved = generator.get_state() if isinstance(generator, torch.Generator) else None
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(seed)
        if saved is not None:
            generator.manual_seed(seed)
        try:
            yield _batches(loader)
        finally:
            if saved is not None:
                generator.set_state(saved)


def finetune_ste(
    model: nn.Module,
    bits: Mapping[str, int],
    loader: Iterable[Any],
    *,
    steps: int,
    lr: float,
    method: str,
    seed: int,
    device: torch.device,
) -> float:
    """Fine-tune ``model`` in place for ``steps`` SGD steps (momentum 0.9) with the STE.

    Args:
        model: the float model (its quantized layers keep float master weights).
        bits: module name -> bit width of the layers to quantize in the forward pass.
        loader: training batches ``(inputs, targets)``, cycled if shorter than ``steps``.
        steps: optimiser steps.
        lr: learning rate.
        method: quantization method (see :func:`~._quantize.quantize_weight`).
        seed: seeds the loader's shuffling (the global torch RNG, and a DataLoader's own
            ``generator``) and any randomness of the model; both states are restored
            afterwards, so the same seed gives the same fine-tune every time.
        device: where the model lives.

    Returns:
        The loss of the last step.
    """
    modules = dict(model.named_modules())
    layers = {name: modules[name] for name in bits}
    optimiser = torch.optim.SGD(
        [p for p in model.parameters() if p.requires_grad], lr=lr, momentum=0.9
    )
    loss = 0.0
    model.train()
    with seeded_batches(loader, seed, device) as batches:
        for _ in range(steps):
            loss = _step(model, layers, bits, next(batches), optimiser, method, device)
    model.eval()
    _log.debug("STE fine-tune: %d steps, last loss %.4f", steps, loss)
    return loss


def _step(
    model: nn.Module,
    layers: Mapping[str, nn.Module],
    bits: Mapping[str, int],
    batch: Any,
    optimiser: torch.optim.Optimizer,
    method: str,
    device: torch.device,
) -> float:
    """One STE step: loss and gradient at the quantized weights, update of the float ones."""
    x, y = split_batch(batch, device)
    masters = {}
    for name, module in layers.items():
        masters[name] = module.weight.detach().clone()
        module.weight.data.copy_(quantize_weight(masters[name], bits[name], method).dequantize())
    loss = F.cross_entropy(model(x), y)
    optimiser.zero_grad(set_to_none=True)
    loss.backward()
    for name, module in layers.items():
        module.weight.data.copy_(masters[name])
    optimiser.step()
    return float(loss.detach())
