"""Applying a policy to a model: quantized weights, optional STE fine-tune, sizes."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization._finetune import finetune_ste
from gpautotune.problems.quantization._quantize import METHODS, QuantizedWeight, quantize_weight

__all__ = ["Quantizer", "WorkingModel"]


@dataclass(frozen=True)
class Quantizer:
    """How a policy is applied.

    Attributes:
        method: ``"uniform"`` (per-channel symmetric) or ``"kmeans"`` (weight sharing).
        finetune_steps: steps of quantization-aware training (STE) before the final
            quantization; 0 quantizes the trained weights directly.
        finetune_lr: the fine-tune's SGD learning rate.
        seed: seed of the fine-tune (loader shuffling), so that it is repeatable.
    """

    method: str = "uniform"
    finetune_steps: int = 0
    finetune_lr: float = 1e-3
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(
                f"quantization method must be one of {list(METHODS)}, got {self.method!r}"
            )
        if self.finetune_steps < 0 or self.finetune_lr <= 0:
            raise ConfigError(
                "need finetune_steps >= 0 and finetune_lr > 0, "
                f"got {self.finetune_steps}, {self.finetune_lr}"
            )

    def quantize(
        self,
        model: nn.Module,
        policy: Mapping[str, int],
        *,
        train_loader: Iterable[Any] | None = None,
        device: torch.device | None = None,
    ) -> tuple[nn.Module, dict[str, QuantizedWeight]]:
        """A quantized copy of ``model`` (on ``device``, default the model's) and its weights."""
        device = device or next(model.parameters()).device
        work = WorkingModel(model, list(policy), self, device, train_loader, cache=False)
        weights = work.load(policy)
        return work.model, weights


class WorkingModel:
    """A float copy of a model on a device, re-quantized for one policy after another.

    Without a fine-tune, quantized layer weights depend only on (layer, bits) and are
    cached (at most one dequantized copy per bit width tried). With a fine-tune, every
    policy starts again from the float weights and buffers of the original model.
    """

    def __init__(
        self,
        model: nn.Module,
        layers: Sequence[str],
        quantizer: Quantizer,
        device: torch.device,
        train_loader: Iterable[Any] | None,
        *,
        cache: bool = True,
    ) -> None:
        if quantizer.finetune_steps and train_loader is None:
            raise ConfigError("finetune_steps > 0 needs a train_loader")
        self.model = copy.deepcopy(model).to(device).eval()
        self.quantizer, self.device, self.train_loader = quantizer, device, train_loader
        self._layers = list(layers)
        self._modules = dict(self.model.named_modules())
        self._float = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self._cache: dict[tuple[str, int], torch.Tensor] | None = {} if cache else None

    def clear_cache(self) -> None:
        """Forget the cached quantized weights (they are recomputed on demand)."""
        if self._cache is not None:
            self._cache.clear()

    def load(self, policy: Mapping[str, int]) -> dict[str, QuantizedWeight]:
        """Set the model to ``policy`` (layer name -> bits).

        Returns:
            The layers quantized by this call (layers served from the cache are absent).
        """
        q = self.quantizer
        use_cache = self._cache is not None and not q.finetune_steps
        if not use_cache:
            self.model.load_state_dict(self._float)
        if q.finetune_steps:
            finetune_ste(
                self.model,
                {n: policy[n] for n in self._layers},
                self.train_loader,
                steps=q.finetune_steps,
                lr=q.finetune_lr,
                method=q.method,
                seed=q.seed,
                device=self.device,
            )
        fresh: dict[str, QuantizedWeight] = {}
        with torch.no_grad():
            for name in self._layers:
                key = (name, int(policy[name]))
                if use_cache and key in self._cache:
                    self._modules[name].weight.copy_(self._cache[key])
                    continue
                source = (
                    self._modules[name].weight
                    if q.finetune_steps
                    else self._float[_weight_key(name)]
                )
                fresh[name] = quantize_weight(source, key[1], q.method)
                weight = fresh[name].dequantize()
                if use_cache:
                    self._cache[key] = weight
                self._modules[name].weight.copy_(weight)
        return fresh


def _weight_key(module_name: str) -> str:
    return f"{module_name}.weight" if module_name else "weight"
