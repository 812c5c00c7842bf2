"""The NumPy reference of the Laplacian filter and the exact interior comparison.

An image is a ``(height, 3·width)`` array of ``uint8`` (interleaved RGB, one row of
``w = 3·width`` bytes). For every interior byte (rows ``1 .. height-2``, bytes ``3 ..
w-4``)::

    out[y, x] = clamp(9·in[y, x] - Σ_{dy, dx ∈ {-1,0,1}², (dy,dx) ≠ 0} in[y+dy, x+3·dx], 0, 255)

Border bytes are undefined and never compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["laplacian_reference", "interior", "compare_interior", "Mismatch", "random_image"]


def interior(image: np.ndarray) -> np.ndarray:
    """The defined part of an image: rows ``1 .. h-2`` and bytes ``3 .. w-4``."""
    return image[1:-1, 3:-3]


def laplacian_reference(image: np.ndarray) -> np.ndarray:
    """The filtered interior of ``image`` (shape ``(h-2, w-6)``, ``uint8``)."""
    if image.dtype != np.uint8 or image.ndim != 2 or image.shape[0] < 3 or image.shape[1] < 7:
        raise ValueError(
            f"expected a (height >= 3, 3*width >= 7) uint8 image, got {image.dtype} {image.shape}"
        )
    src = image.astype(np.int16)
    h, w = src.shape
    acc = 10 * src[1 : h - 1, 3 : w - 3]
    for dy in range(3):
        for dx in (0, 3, 6):
            acc -= src[dy : dy + h - 2, dx : dx + w - 6]
    return np.clip(acc, 0, 255).astype(np.uint8)


def random_image(width: int, height: int, seed: int, padding_rows: int = 0) -> np.ndarray:
    """A reproducible random RGB image of shape ``(height + padding_rows, 3·width)``."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(height + padding_rows, 3 * width), dtype=np.uint8)


@dataclass(frozen=True)
class Mismatch:
    """How an output differs from the reference.

    Attributes:
        count: interior bytes that differ.
        first: ``(row, byte)`` of the first differing byte, in image coordinates.
        expected: the reference value there.
        got: the kernel's value there.
    """

    count: int
    first: tuple[int, int]
    expected: int
    got: int

    def __str__(self) -> str:
        return (
            f"{self.count} interior bytes differ from the reference; first at row {self.first[0]},"
            f" byte {self.first[1]}: expected {self.expected}, got {self.got}"
        )


def compare_interior(output: np.ndarray, expected_interior: np.ndarray) -> Mismatch | None:
    """Compare ``output``'s interior with the reference exactly; ``None`` when equal."""
    got = interior(output)
    if got.shape == expected_interior.shape and np.array_equal(got, expected_interior):
        return None
    diff = np.argwhere(got != expected_interior)
    r, c = (int(v) for v in diff[0])
    return Mismatch(len(diff), (r + 1, c + 3), int(expected_interior[r, c]), int(got[r, c]))
