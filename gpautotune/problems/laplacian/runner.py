"""Build, launch, check and time generated Laplacian kernels on one OpenCL device.

Protocol (seeds, see ``shared/docs/laplacian-kernel.md``): for every image size, fill the
output with a sentinel, launch once (warm-up), compare the interior with the NumPy
reference bit-exactly, then time ``repeats`` launches by event profiling. The value is

    mean over sizes of  min(kernel times) / ((width - 2)·(height - 2))   [s / pixel]

Failures come back as statuses (``build_error`` with the log, ``invalid`` for a work
group the built kernel cannot run, refused before launch, ``run_error`` with the OpenCL
error, ``wrong_result`` with the first difference), never as exceptions. A hung
kernel cannot be interrupted from inside the process: run evaluations through
:class:`~gpautotune.execution.IsolatedEvaluator` for timeouts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.measurement import Measurement, Status
from gpautotune.problems.laplacian.bandwidth import bound_time_per_pixel
from gpautotune.problems.laplacian.generator import KERNEL_NAME, GeneratedKernel
from gpautotune.problems.laplacian.reference import (
    Mismatch,
    compare_interior,
    laplacian_reference,
    random_image,
)
from gpautotune.problems.opencl import (
    REFUSED_METRIC,
    BuildFailure,
    CopyBandwidth,
    DeviceInfo,
    DeviceSession,
    LaunchLimits,
    measure_copy_bandwidth,
    timed_launch,
)

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["LaplacianRunner"]

_log = logging.getLogger(__name__)
_MIN_PROBE_BYTES = 32 << 20


@dataclass
class _Image:
    """One image size on the device: input (one padding row), output, reference, sentinel."""

    width: int
    height: int
    expected: np.ndarray
    sentinel: np.ndarray
    host_out: np.ndarray
    d_in: cl.Buffer
    d_out: cl.Buffer

    @property
    def pixels(self) -> int:
        """Interior pixels, the objective's denominator."""
        return (self.width - 2) * (self.height - 2)


class LaplacianRunner:
    """Measures generated kernels on one device for a fixed list of image sizes.

    Args:
        device: the device (from :func:`~gpautotune.problems.laplacian.devices.select_device`).
        sizes: ``(width, height)`` pairs in pixels.
        repeats: timed launches per size (after one warm-up).
        seed: seed of the input images and sentinels.
        build_options: OpenCL compiler options.
        probe_bandwidth: measure the copy bandwidth once, to report the memory bound.
    """

    def __init__(
        self,
        device: DeviceInfo,
        sizes: Sequence[tuple[int, int]],
        *,
        repeats: int = 4,
        seed: int = 0,
        build_options: str = "",
        probe_bandwidth: bool = True,
    ) -> None:
        self.repeats, self.build_options = repeats, build_options
        self.session = DeviceSession(device)
        self.info = self.session.info  # this process's device (a Dask worker's own)
        self.device, self.context = self.session.device, self.session.context
        self.queue, self.builds = self.session.queue, self.session.builds
        self.images = [self._image(w, h, seed + i) for i, (w, h) in enumerate(sizes)]
        self.bandwidth: CopyBandwidth | None = None
        if probe_bandwidth:
            largest = max(3 * w * h for w, h in sizes)
            cap = int(self.device.max_mem_alloc_size) // 2
            self.bandwidth = measure_copy_bandwidth(
                self.context, self.queue, min(cap, max(_MIN_PROBE_BYTES, largest))
            )

    def _image(self, width: int, height: int, seed: int) -> _Image:
        import pyopencl as cl

        host_in = random_image(width, height, seed, padding_rows=1)
        expected = laplacian_reference(host_in[:height])
        # Random bytes that differ from the reference at every interior byte.
        rng = np.random.default_rng(seed + 10_000)
        sentinel = rng.integers(0, 256, size=(height, 3 * width), dtype=np.uint8)
        shift = rng.integers(1, 256, size=expected.shape, dtype=np.uint16)
        sentinel[1:-1, 3:-3] = ((expected.astype(np.uint16) + shift) % 256).astype(np.uint8)
        mf = cl.mem_flags
        d_in = cl.Buffer(self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host_in)
        d_out = cl.Buffer(self.context, mf.READ_WRITE, sentinel.nbytes)
        return _Image(width, height, expected, sentinel, np.empty_like(sentinel), d_in, d_out)

    def metadata(self) -> dict[str, Any]:
        """Device, platform and driver, stored with every measurement."""
        meta: dict[str, Any] = {
            **self.session.metadata(),
            "sizes": [[im.width, im.height] for im in self.images],
            "repeats": self.repeats,
        }
        if self.bandwidth is not None:
            meta["copy_bandwidth_Bps"] = self.bandwidth.bytes_per_s
            meta["bound_time_per_pixel_s"] = bound_time_per_pixel(self.bandwidth.bytes_per_s)
        return meta

    def measure(self, kernel: GeneratedKernel) -> Measurement:
        """Build, check and time ``kernel`` on every size; failures become statuses."""
        import pyopencl as cl

        meta = {**self.metadata(), "source": kernel.source, "local_size": list(kernel.local_size)}
        try:
            built = self.builds.build(kernel.source, self.build_options)
        except BuildFailure as exc:
            return Measurement.failure(Status.BUILD_ERROR, exc.log, **meta)
        meta.update(build_time_s=built.build_time_s, build_cached=built.cached)
        times: list[list[float]] = []
        try:
            clk = cl.Kernel(built.program, KERNEL_NAME)
            limits = LaunchLimits.of(clk, self.device)
            meta.update(limits.as_metrics())
            refusal = limits.refusal(kernel.local_size)
            if refusal is not None:
                return Measurement.failure(
                    Status.INVALID,
                    f"refused before launch: {refusal}",
                    **meta,
                    **{REFUSED_METRIC: True},
                )
            for image in self.images:
                result = self._run_size(clk, kernel, image)
                if isinstance(result, Mismatch):
                    return Measurement.failure(
                        Status.WRONG_RESULT, f"{image.width}x{image.height}: {result}", **meta
                    )
                times.append(result)
        except cl.Error as exc:
            return Measurement.failure(Status.RUN_ERROR, f"{type(exc).__name__}: {exc}", **meta)
        return self._success(kernel, times, meta)

    def _run_size(
        self, clk: cl.Kernel, kernel: GeneratedKernel, image: _Image
    ) -> list[float] | Mismatch:
        import pyopencl as cl

        gsize = kernel.global_size(image.width, image.height)
        clk.set_args(image.d_in, image.d_out, np.int32(image.width), np.int32(image.height))
        cl.enqueue_copy(self.queue, image.d_out, image.sentinel)
        self._launch(clk, gsize, kernel.local_size)
        cl.enqueue_copy(self.queue, image.host_out, image.d_out)
        self.queue.finish()
        mismatch = compare_interior(image.host_out, image.expected)
        if mismatch is not None:
            return mismatch
        return [self._launch(clk, gsize, kernel.local_size) for _ in range(self.repeats)]

    def _launch(self, clk: cl.Kernel, gsize: tuple[int, int], lsize: tuple[int, int]) -> float:
        return timed_launch(self.queue, clk, gsize, lsize)

    def _success(
        self, kernel: GeneratedKernel, times: list[list[float]], meta: dict[str, Any]
    ) -> Measurement:
        per_size = [min(t) / im.pixels for t, im in zip(times, self.images, strict=True)]
        value = float(np.mean(per_size))
        samples = [s / im.pixels for t, im in zip(times, self.images, strict=True) for s in t]
        meta.update(
            kernel_times_s=times,
            time_per_pixel_by_size=per_size,
            global_sizes=[list(kernel.global_size(im.width, im.height)) for im in self.images],
        )
        if self.bandwidth is not None:
            meta["bound_fraction"] = bound_time_per_pixel(self.bandwidth.bytes_per_s) / value
        return Measurement.success(value, samples, **meta)

    def close(self) -> None:
        """Release the device buffers."""
        for image in self.images:
            image.d_in.release()
            image.d_out.release()
        self.images = []
