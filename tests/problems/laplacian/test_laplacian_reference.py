"""The NumPy reference against a plain loop, and the exact comparison."""

from __future__ import annotations

import numpy as np

from gpautotune.problems.laplacian.reference import (
    compare_interior,
    laplacian_reference,
    random_image,
)


def _loop_reference(image: np.ndarray) -> np.ndarray:
    h, w = image.shape
    src = image.astype(int)
    out = np.zeros((h - 2, w - 6), dtype=np.uint8)
    for y in range(1, h - 1):
        for x in range(3, w - 3):
            acc = 9 * src[y, x] - sum(
                src[y + dy, x + 3 * dx]
                for dy in (-1, 0, 1)
                for dx in (-1, 0, 1)
                if (dy, dx) != (0, 0)
            )
            out[y - 1, x - 3] = min(max(acc, 0), 255)
    return out


def test_reference_matches_the_loop():
    image = random_image(9, 7, seed=4)
    assert np.array_equal(laplacian_reference(image), _loop_reference(image))


def test_reference_clamps_both_ways():
    image = np.zeros((3, 9), dtype=np.uint8)
    image[1, 4] = 200  # centre bright: 9*200 clamps to 255; its neighbours go negative -> 0
    ref = laplacian_reference(image)
    assert ref[0, 1] == 255 and ref[0, 0] == 0


def test_compare_finds_the_first_difference_in_image_coordinates():
    image = random_image(8, 6, seed=1)
    expected = laplacian_reference(image)
    out = np.zeros_like(image)
    out[1:-1, 3:-3] = expected
    out[0, :] = 7  # borders are not compared
    assert compare_interior(out, expected) is None
    out[2, 5] ^= 1
    mismatch = compare_interior(out, expected)
    assert mismatch is not None and mismatch.count == 1 and mismatch.first == (2, 5)
