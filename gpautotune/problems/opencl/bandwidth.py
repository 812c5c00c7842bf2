"""The copy-bandwidth probe: what a plain copy kernel moves per second on the device.

A ``uint4`` copy kernel, timed by event profiling in the same context as the tuned
kernels, measures the bandwidth ``B = 2·nbytes / min(time)`` (read + write counted):
the yardstick for memory-bound kernels.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["CopyBandwidth", "measure_copy_bandwidth"]

_COPY_SOURCE = """
__kernel void copy(const __global uint4 * restrict src, __global uint4 * restrict dst) {
  const size_t i = get_global_id(0);
  dst[i] = src[i];
}
"""


@dataclass(frozen=True)
class CopyBandwidth:
    """Result of the copy probe.

    Attributes:
        bytes_per_s: the best bandwidth, ``2·nbytes / min(time)`` (read + write).
        nbytes: size of the copied buffer.
        samples_s: every timed copy (seconds).
    """

    bytes_per_s: float
    nbytes: int
    samples_s: tuple[float, ...]


def measure_copy_bandwidth(
    context: cl.Context, queue: cl.CommandQueue, nbytes: int, *, repeats: int = 5
) -> CopyBandwidth:
    """Time ``repeats`` copies of ``nbytes`` (after one warm-up) with a plain copy kernel.

    Args:
        context: the context of the measured kernels.
        queue: a queue of that context with profiling enabled.
        nbytes: bytes to copy, rounded down to a multiple of 16 KiB.
        repeats: timed copies.
    """
    import numpy as np
    import pyopencl as cl

    nbytes = max(16384, nbytes - nbytes % 16384)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cl.CompilerWarning)
        program = cl.Program(context, _COPY_SOURCE).build(cache_dir=False)
    kernel = cl.Kernel(program, "copy")
    mf = cl.mem_flags
    src = cl.Buffer(
        context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ones(nbytes, dtype=np.uint8)
    )
    dst = cl.Buffer(context, mf.WRITE_ONLY, nbytes)
    kernel.set_args(src, dst)
    samples = []
    for i in range(repeats + 1):
        event = cl.enqueue_nd_range_kernel(queue, kernel, (nbytes // 16,), None)
        event.wait()
        if i:
            samples.append((event.profile.end - event.profile.start) * 1e-9)
    src.release()
    dst.release()
    return CopyBandwidth(2 * nbytes / min(samples), nbytes, tuple(samples))
