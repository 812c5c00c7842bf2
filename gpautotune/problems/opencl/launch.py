"""What a built kernel allows, checked before launching it.

A launch whose work group is larger than the device allows (in items or per
dimension), or that needs more local memory than the device has, cannot run: drivers
answer ``CL_OUT_OF_RESOURCES`` or ``CL_INVALID_WORK_GROUP_SIZE`` after the enqueue, and
PoCL aborts the whole process. :meth:`LaunchLimits.refusal` says why such a launch
cannot run, so that problems return an ``invalid`` measurement (metric
:data:`REFUSED_METRIC`) without launching.

The built kernel's own limit (``CL_KERNEL_WORK_GROUP_SIZE``, lowered by register use)
is a hard limit only where a failed launch is fatal (PoCL). Elsewhere it is a hint:
NVIDIA's OpenCL driver answers 256 for every kernel of the Laplacian and the matrix
multiply on an H100, yet runs their 1024-item groups correctly (a GPR run that trusted
the hint refused 98 of 120 evaluations, the K40c optimum among them; docs/own-kernels.md).
Such launches are tried, and a driver error is a ``run_error`` as for any other launch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = [
    "LaunchLimits",
    "REFUSED_METRIC",
    "fatal_launch_failures",
    "refused_launches",
    "timed_launch",
]

#: Metric set to true on a measurement refused before launch (count them with
#: :func:`refused_launches`).
REFUSED_METRIC = "refused_launch"


@dataclass(frozen=True)
class LaunchLimits:
    """The launch limits of one built kernel on one device.

    Attributes:
        work_group_size: the most work items per group this kernel can run with, as the
            driver reports it (``CL_KERNEL_WORK_GROUP_SIZE``).
        kernel_local_bytes: local memory the kernel itself uses (``__local`` arrays).
        device_local_bytes: local memory per work group on the device.
        max_work_item_sizes: the device's largest work-group extent per dimension.
        device_work_group_size: the device's most work items per group (``None``: no
            limit beyond the kernel's).
        kernel_limit_is_hard: whether launches above ``work_group_size`` are refused
            (where a failed launch is fatal) or tried.
    """

    work_group_size: int
    kernel_local_bytes: int
    device_local_bytes: int
    max_work_item_sizes: tuple[int, ...]
    device_work_group_size: int | None = None
    kernel_limit_is_hard: bool = True

    @classmethod
    def of(cls, kernel: cl.Kernel, device: cl.Device) -> LaunchLimits:
        """Read the limits of ``kernel`` (query before setting local-memory arguments)."""
        import pyopencl as cl

        info = cl.kernel_work_group_info
        return cls(
            int(kernel.get_work_group_info(info.WORK_GROUP_SIZE, device)),
            int(kernel.get_work_group_info(info.LOCAL_MEM_SIZE, device)),
            int(device.local_mem_size),
            tuple(int(s) for s in device.max_work_item_sizes),
            int(device.max_work_group_size),
            kernel_limit_is_hard=fatal_launch_failures(device),
        )

    def refusal(self, local_size: Sequence[int], dynamic_local_bytes: int = 0) -> str | None:
        """Why a launch with ``local_size`` and ``dynamic_local_bytes`` of ``__local``
        arguments cannot run, or ``None`` when it can."""
        items, shape = math.prod(local_size), "x".join(map(str, local_size))
        device = self.device_work_group_size
        if device is not None and items > device:
            return f"work group of {items} items ({shape}) exceeds the device's {device}"
        if self.kernel_limit_is_hard and items > self.work_group_size:
            return (
                f"work group of {items} items ({shape}) exceeds the "
                f"{self.work_group_size} this kernel allows on the device"
            )
        limits = self.max_work_item_sizes[: len(local_size)]
        for dim, (size, limit) in enumerate(zip(local_size, limits, strict=True)):
            if size > limit:
                return f"work-group extent {size} in dimension {dim} exceeds the device's {limit}"
        local = self.kernel_local_bytes + dynamic_local_bytes
        if local > self.device_local_bytes:
            return (
                f"{local} bytes of local memory ({self.kernel_local_bytes} in the kernel + "
                f"{dynamic_local_bytes} in arguments) exceed the device's {self.device_local_bytes}"
            )
        return None

    def as_metrics(self) -> dict[str, Any]:
        """The limits as measurement metrics."""
        return {
            "kernel_max_work_group_size": self.work_group_size,
            "kernel_limit_is_hard": self.kernel_limit_is_hard,
            "kernel_local_mem_bytes": self.kernel_local_bytes,
            "device_local_mem_bytes": self.device_local_bytes,
        }


def fatal_launch_failures(device: cl.Device) -> bool:
    """Whether a launch the driver cannot run ends the process instead of raising (PoCL)."""
    return "portable computing language" in str(device.platform.name).lower()


def timed_launch(
    queue: cl.CommandQueue,
    kernel: cl.Kernel,
    global_size: Sequence[int],
    local_size: Sequence[int] | None,
) -> float:
    """Launch ``kernel`` once and return its event-profiled run time in seconds
    (``queue`` must have profiling enabled)."""
    import pyopencl as cl

    event = cl.enqueue_nd_range_kernel(
        queue, kernel, tuple(global_size), None if local_size is None else tuple(local_size)
    )
    event.wait()
    return (event.profile.end - event.profile.start) * 1e-9


def refused_launches(measurements: Sequence[Any]) -> int:
    """How many of ``measurements`` (or trials) were refused before launch."""
    return sum(bool(getattr(m, "measurement", m).metrics.get(REFUSED_METRIC)) for m in measurements)
