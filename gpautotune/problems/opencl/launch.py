"""What a built kernel allows, checked before launching it.

A launch whose work group is larger than the built kernel allows
(``CL_KERNEL_WORK_GROUP_SIZE``, lowered by register use on GPUs), larger than the
device's per-dimension limits, or that needs more local memory than the device has,
cannot run: drivers answer ``CL_OUT_OF_RESOURCES`` or ``CL_INVALID_WORK_GROUP_SIZE``
after the enqueue, and PoCL aborts the whole process. :meth:`LaunchLimits.refusal`
says why such a launch cannot run, so that problems return an ``invalid`` measurement
(metric :data:`REFUSED_METRIC`) without launching.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["LaunchLimits", "REFUSED_METRIC", "refused_launches", "timed_launch"]

#: Metric set to true on a measurement refused before launch (count them with
#: :func:`refused_launches`).
REFUSED_METRIC = "refused_launch"


@dataclass(frozen=True)
class LaunchLimits:
    """The launch limits of one built kernel on one device.

    Attributes:
        work_group_size: the most work items per group this kernel can run with.
        kernel_local_bytes: local memory the kernel itself uses (``__local`` arrays).
        device_local_bytes: local memory per work group on the device.
        max_work_item_sizes: the device's largest work-group extent per dimension.
    """

    work_group_size: int
    kernel_local_bytes: int
    device_local_bytes: int
    max_work_item_sizes: tuple[int, ...]

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
        )

    def refusal(self, local_size: Sequence[int], dynamic_local_bytes: int = 0) -> str | None:
        """Why a launch with ``local_size`` and ``dynamic_local_bytes`` of ``__local``
        arguments cannot run, or ``None`` when it can."""
        items = math.prod(local_size)
        if items > self.work_group_size:
            return (
                f"work group of {items} items ({'x'.join(map(str, local_size))}) exceeds the "
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
            "kernel_local_mem_bytes": self.kernel_local_bytes,
            "device_local_mem_bytes": self.device_local_bytes,
        }


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
