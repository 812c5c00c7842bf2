"""What identifies a quantization run: a fingerprint of the model, a digest of the data.

The model's fingerprint is in the run's key (another model is another run). The data's
digest is stored beside the key, as for a replayed table (``Problem.data_digest``): a
run resumed on other validation data, or on another fine-tune's training batches, is
refused instead of mixing accuracies measured on two datasets.

Both hash the raw bytes of tensors (any dtype, bfloat16 included: ``view(torch.uint8)``
gives the bytes ``numpy().tobytes()`` gave for the dtypes NumPy has, so fingerprints of
runs stored before are unchanged).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

__all__ = ["combine_digests", "model_fingerprint", "train_digest", "validation_digest"]


def tensor_bytes(tensor: torch.Tensor) -> bytes:
    """The raw bytes of ``tensor`` (on the CPU, C order), whatever its dtype."""
    return tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def model_fingerprint(model: nn.Module) -> str:
    """A short hash of a model's parameters and buffers (identifies the run's model)."""
    digest = hashlib.blake2b(digest_size=8)
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor_bytes(tensor))
    return digest.hexdigest()


def _update(digest: Any, value: Any) -> None:
    """Hash a batch element: tensors by dtype, shape and bytes; containers item by item."""
    if isinstance(value, torch.Tensor):
        digest.update(f"{value.dtype}{tuple(value.shape)}".encode())
        digest.update(tensor_bytes(value))
    elif isinstance(value, Mapping):
        for key in sorted(value, key=str):
            digest.update(str(key).encode())
            _update(digest, value[key])
    elif isinstance(value, (tuple, list)):
        digest.update(f"[{len(value)}]".encode())
        for item in value:
            _update(digest, item)
    else:
        digest.update(repr(value).encode())


def _example_digests(batch: Any) -> Iterator[bytes]:
    """One digest per example of an ``(inputs, targets, ...)`` batch of tensors; one for
    the whole batch where its elements are not tensors of one batch size."""
    parts = list(batch) if isinstance(batch, (tuple, list)) else [batch]
    sizes = {p.shape[0] if isinstance(p, torch.Tensor) and p.dim() else None for p in parts}
    if len(sizes) != 1 or None in sizes:
        digest = hashlib.blake2b(b"batch", digest_size=16)
        _update(digest, batch)
        yield digest.digest()
        return
    n = sizes.pop()
    if n == 0:
        return
    header = "".join(f"{p.dtype}{tuple(p.shape[1:])}" for p in parts).encode()
    rows = [p.detach().to("cpu").contiguous().reshape(n, -1).view(torch.uint8) for p in parts]
    rows = [r.numpy() for r in rows]
    for i in range(n):
        digest = hashlib.blake2b(header, digest_size=16)
        for r in rows:
            digest.update(r[i].tobytes())
        yield digest.digest()


def validation_digest(loader: Iterable[Any]) -> str:
    """A digest of the examples ``loader`` yields, in any order and batching.

    Accuracy does not depend on the order of the examples, so a shuffling validation
    loader gives one digest: each example is hashed, and the sorted hashes are hashed.
    Costs one pass over the data (no model evaluation).
    """
    examples = sorted(d for batch in loader for d in _example_digests(batch))
    digest = hashlib.blake2b(b"validation", digest_size=16)
    for d in examples:
        digest.update(d)
    return digest.hexdigest()


def train_digest(batches: Iterable[Any]) -> str:
    """A digest of the fine-tune's training batches, in order (the order changes the
    fine-tuned weights)."""
    digest = hashlib.blake2b(b"train", digest_size=16)
    for batch in batches:
        _update(digest, batch)
    return digest.hexdigest()


def combine_digests(*digests: str) -> str:
    """One digest of several (the validation data's and the fine-tune's)."""
    return hashlib.blake2b("/".join(digests).encode(), digest_size=16).hexdigest()
