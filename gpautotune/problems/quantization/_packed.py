"""A quantized model in its compact form: packed codes and scales, saved and loaded.

:meth:`Quantizer.quantize <gpautotune.problems.quantization.Quantizer.quantize>` gives a
float32 model that computes with the quantized weights (its ``state_dict`` is as large as
the original's). :class:`PackedModel` holds what the quantization really needs to store:
per quantized layer the ``b``-bit codes packed tightly and the float32 scales (or k-means
codebook), plus the model's other tensors (biases, normalisation statistics) as they are.
Its :attr:`~PackedModel.weight_bytes` is the size the search counted
(:func:`~gpautotune.problems.quantization.weight_bytes` summed over the layers), and
:meth:`~PackedModel.save` writes a file of that size plus the other tensors and a small
header. :meth:`~PackedModel.unpack` rebuilds the float model from it.

The file is a ``torch.save`` archive (format ``gpautotune-packed/1``): per layer the bit
width, method, shape, packed codes (``uint8``) and scales; load it with
:func:`load_packed` (it holds tensors and plain values only, read with
``weights_only=True``).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems.quantization._quantize import QuantizedWeight, pack_codes, unpack_codes
from gpautotune.problems.quantization._quantizer import _weight_key

__all__ = ["PackedLayer", "PackedModel", "load_packed", "FORMAT"]

FORMAT = "gpautotune-packed/1"


@dataclass(frozen=True, eq=False)
class PackedLayer:
    """One quantized weight tensor as stored.

    Attributes:
        bits: the bit width.
        method: ``"uniform"`` or ``"kmeans"``.
        shape: the weight's shape.
        codes: the codes packed ``bits`` to a code (:func:`pack_codes`).
        scales: float32 per-channel scales (uniform) or the codebook (k-means).
    """

    bits: int
    method: str
    shape: tuple[int, ...]
    codes: bytes
    scales: torch.Tensor

    @classmethod
    def of(cls, weight: QuantizedWeight) -> PackedLayer:
        scales = weight.scales.detach().to("cpu", torch.float32).contiguous()
        return cls(
            weight.bits, weight.method, weight.shape, pack_codes(weight.codes, weight.bits), scales
        )

    @property
    def nbytes(self) -> int:
        """Packed codes plus scales."""
        return len(self.codes) + self.scales.numel() * self.scales.element_size()

    def dequantize(self) -> torch.Tensor:
        """The float32 weight the layer computes with."""
        n = 1
        for d in self.shape:
            n *= d
        codes = unpack_codes(self.codes, self.bits, n)
        return QuantizedWeight(self.bits, self.method, self.shape, codes, self.scales).dequantize()


@dataclass(frozen=True, eq=False)
class PackedModel:
    """A model's quantized layers packed, and its other tensors as they are.

    Attributes:
        layers: module name -> packed weight.
        others: the other ``state_dict`` entries (biases, buffers), on the CPU.
        policy: module name -> bits.
    """

    layers: Mapping[str, PackedLayer]
    others: Mapping[str, torch.Tensor] = field(repr=False)

    @property
    def policy(self) -> dict[str, int]:
        return {name: layer.bits for name, layer in self.layers.items()}

    @property
    def weight_bytes(self) -> int:
        """Bytes of the quantized weights (codes and scales): the size the search counted."""
        return sum(layer.nbytes for layer in self.layers.values())

    @property
    def other_bytes(self) -> int:
        """Bytes of the tensors kept as they are."""
        return sum(t.numel() * t.element_size() for t in self.others.values())

    @classmethod
    def of(cls, model: nn.Module, weights: Mapping[str, QuantizedWeight]) -> PackedModel:
        """Pack ``weights`` (module name -> quantized weight) with ``model``'s other tensors."""
        keys = {_weight_key(name) for name in weights}
        state = model.state_dict()
        missing = sorted(keys - set(state))
        if missing:
            raise ConfigError(f"the model has no weights {missing} to replace")
        others = {k: v.detach().to("cpu").clone() for k, v in state.items() if k not in keys}
        return cls({name: PackedLayer.of(w) for name, w in weights.items()}, others)

    def unpack(self, model: nn.Module) -> nn.Module:
        """A copy of ``model`` (same architecture) holding the packed weights, in float32.

        Raises:
            ConfigError: ``model``'s tensors do not match the packed ones.
        """
        out = copy.deepcopy(model)
        state = dict(self.others)
        state.update({_weight_key(n): layer.dequantize() for n, layer in self.layers.items()})
        try:
            out.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise ConfigError(f"the packed weights do not fit this model: {exc}") from None
        return out

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the compact form (see the module docstring); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(
            {
                "format": FORMAT,
                "layers": {
                    name: {
                        "bits": layer.bits,
                        "method": layer.method,
                        "shape": list(layer.shape),
                        "codes": torch.frombuffer(bytearray(layer.codes), dtype=torch.uint8),
                        "scales": layer.scales,
                    }
                    for name, layer in self.layers.items()
                },
                "others": dict(self.others),
            },
            path,
        )
        return path


def load_packed(path: str | os.PathLike[str]) -> PackedModel:
    """Read a file written by :meth:`PackedModel.save`.

    Raises:
        DataNotFoundError: no such file.
        ConfigError: the file is not in the packed format.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"packed model {str(path)!r} does not exist")
    data: Any = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path} is not a packed model ({FORMAT})")
    layers = {
        name: PackedLayer(
            int(d["bits"]),
            str(d["method"]),
            tuple(int(x) for x in d["shape"]),
            d["codes"].numpy().tobytes(),
            d["scales"],
        )
        for name, d in data["layers"].items()
    }
    return PackedModel(layers, data["others"])
