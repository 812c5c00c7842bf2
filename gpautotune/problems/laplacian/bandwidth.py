"""The Laplacian's memory bound, from the copy-bandwidth probe.

The Laplacian reads 3 and writes 3 bytes per pixel (neighbour rows hit in cache), so on a
device copying ``B`` bytes/s (read + write counted)::

    time_per_pixel >= 6 / B

``B`` comes from :func:`~gpautotune.problems.opencl.measure_copy_bandwidth`.
"""

from __future__ import annotations

from gpautotune.problems.opencl.bandwidth import CopyBandwidth, measure_copy_bandwidth

__all__ = ["CopyBandwidth", "measure_copy_bandwidth", "BYTES_PER_PIXEL", "bound_time_per_pixel"]

#: Bytes the Laplacian moves per pixel: 3 read + 3 written.
BYTES_PER_PIXEL = 6


def bound_time_per_pixel(bytes_per_s: float) -> float:
    """The memory bound ``6 bytes / bandwidth`` of one pixel, in seconds."""
    return BYTES_PER_PIXEL / bytes_per_s
