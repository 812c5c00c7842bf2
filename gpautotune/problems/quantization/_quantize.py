"""Quantizing one weight tensor to ``b`` bits, and its exact storage size.

Two methods:

* ``"uniform"`` — symmetric uniform quantization per output channel ``c``. With
  ``b >= 2`` bits and ``q_max = 2^(b-1) - 1``, the scale is ``s_c = max_i |w_ci| / q_max``
  and ``w_ci ~ s_c * clamp(round(w_ci / s_c), -q_max, q_max)`` (``2^b - 1`` levels, stored
  as the ``b``-bit code ``q + q_max``). With ``b = 1`` the channel is binarised:
  ``w_ci ~ sign(w_ci) * mean_i |w_ci|`` (``sign(0) = +1``), the code is the sign bit.
  Storage: the codes plus one float32 scale per output channel.
* ``"kmeans"`` — weight sharing as in HAQ: a per-layer codebook of ``k = min(2^b, n)``
  centroids found by 1-D Lloyd iterations (linear initialisation between the smallest and
  the largest weight), each weight replaced by its nearest centroid. Storage: the ``b``-bit
  centroid indices plus the float32 codebook.

Codes are packed tightly, so a layer of ``n`` weights at ``b`` bits takes
``ceil(n b / 8)`` bytes (:func:`pack_codes` really packs them; :func:`weight_bytes` gives
the same number without quantizing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from gpautotune.exceptions import ConfigError

__all__ = [
    "Method",
    "METHODS",
    "QuantizedWeight",
    "quantize_weight",
    "weight_bytes",
    "pack_codes",
    "unpack_codes",
]

Method = Literal["uniform", "kmeans"]
METHODS: tuple[str, ...] = ("uniform", "kmeans")
SCALE_BYTES = 4  # float32 scales and centroids
KMEANS_ITERATIONS = 30


def _check(method: str, bits: int) -> None:
    if method not in METHODS:
        raise ConfigError(f"quantization method must be one of {list(METHODS)}, got {method!r}")
    if not isinstance(bits, (int, np.integer)) or not 1 <= bits <= 16:
        raise ConfigError(f"bit widths must be integers in 1..16, got {bits!r}")


def weight_bytes(n_weights: int, out_channels: int, bits: int, method: str = "uniform") -> int:
    """Exact bytes of one quantized layer: ``ceil(n b / 8)`` + 4 x (scales or centroids).

    Args:
        n_weights: weights in the layer.
        out_channels: output channels (one scale each with ``"uniform"``).
        bits: the bit width ``b``.
        method: ``"uniform"`` or ``"kmeans"`` (``min(2^b, n)`` centroids).
    """
    _check(method, bits)
    extra = out_channels if method == "uniform" else min(2**bits, n_weights)
    return math.ceil(n_weights * bits / 8) + SCALE_BYTES * extra


@dataclass(frozen=True, eq=False)
class QuantizedWeight:
    """A quantized weight tensor as it would be stored.

    Attributes:
        bits: the bit width.
        method: ``"uniform"`` or ``"kmeans"``.
        shape: the original weight shape.
        codes: integer codes in ``[0, 2^b)``, shape ``(n,)`` (int64).
        scales: float32 per-channel scales (uniform) or the codebook (k-means).
    """

    bits: int
    method: str
    shape: tuple[int, ...]
    codes: torch.Tensor
    scales: torch.Tensor

    def dequantize(self) -> torch.Tensor:
        """The float32 weight tensor the quantized layer computes with."""
        if self.method == "kmeans":
            return self.scales[self.codes].reshape(self.shape)
        rows = self.codes.reshape(self.shape[0], -1).to(torch.float32)
        if self.bits == 1:
            levels = rows * 2 - 1
        else:
            levels = rows - (2 ** (self.bits - 1) - 1)
        return (levels * self.scales[:, None]).reshape(self.shape)

    @property
    def nbytes(self) -> int:
        """Measured storage: the length of the packed codes plus the float32 scales."""
        return (
            len(pack_codes(self.codes, self.bits))
            + self.scales.numel() * self.scales.element_size()
        )


def quantize_weight(weight: torch.Tensor, bits: int, method: str = "uniform") -> QuantizedWeight:
    """Quantize one weight tensor (output channels first) to ``bits`` bits, on its device."""
    _check(method, bits)
    w = weight.detach().to(torch.float32)
    if method == "kmeans":
        codes, scales = _kmeans(w.reshape(-1), bits)
    else:
        codes, scales = _uniform(w.reshape(w.shape[0], -1), bits)
    return QuantizedWeight(int(bits), method, tuple(weight.shape), codes.reshape(-1), scales)


def _uniform(rows: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    if bits == 1:
        scales = rows.abs().mean(dim=1)
        return (rows >= 0).to(torch.int64), scales
    qmax = 2 ** (bits - 1) - 1
    scales = rows.abs().amax(dim=1) / qmax
    scales = torch.where(scales > 0, scales, torch.ones_like(scales))
    q = torch.clamp(torch.round(rows / scales[:, None]), -qmax, qmax)
    return (q + qmax).to(torch.int64), scales


def _kmeans(w: torch.Tensor, bits: int) -> tuple[torch.Tensor, torch.Tensor]:
    """1-D Lloyd: assign by the sorted centroids' midpoints, move centroids to their means."""
    k = min(2**bits, w.numel())
    lo, hi = w.min(), w.max()
    centroids = torch.linspace(0.0, 1.0, k, device=w.device) * (hi - lo) + lo
    for _ in range(KMEANS_ITERATIONS):
        labels = torch.bucketize(w, (centroids[1:] + centroids[:-1]) / 2)
        counts = torch.bincount(labels, minlength=k).to(w.dtype)
        sums = torch.zeros(k, dtype=w.dtype, device=w.device).index_add_(0, labels, w)
        updated = torch.where(counts > 0, sums / counts.clamp(min=1), centroids)
        updated, _ = torch.sort(updated)
        if torch.equal(updated, centroids):
            break
        centroids = updated
    labels = torch.bucketize(w, (centroids[1:] + centroids[:-1]) / 2)
    return labels, centroids


def pack_codes(codes: torch.Tensor, bits: int) -> bytes:
    """Pack ``b``-bit codes tightly (least significant bit first): ``ceil(n b / 8)`` bytes."""
    values = codes.detach().cpu().numpy().astype(np.int64).ravel()
    if values.size and (values.min() < 0 or values.max() >= 2**bits):
        raise ValueError(f"codes must lie in [0, 2^{bits}) to be packed in {bits} bits")
    bit_matrix = (values[:, None] >> np.arange(bits)) & 1
    return np.packbits(bit_matrix.astype(np.uint8).ravel(), bitorder="little").tobytes()


def unpack_codes(data: bytes, bits: int, n: int) -> torch.Tensor:
    """Inverse of :func:`pack_codes`: ``n`` codes of ``bits`` bits."""
    flat = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")[: n * bits]
    weights = (1 << np.arange(bits)).astype(np.int64)
    return torch.from_numpy(flat.reshape(n, bits).astype(np.int64) @ weights)
