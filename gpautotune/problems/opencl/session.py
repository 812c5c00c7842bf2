"""One device opened for measuring: context, profiling queue and build cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpautotune.problems.opencl.build import BuildCache
from gpautotune.problems.opencl.devices import DeviceInfo, open_device

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["DeviceSession"]


class DeviceSession:
    """An OpenCL context on one device with a profiling queue and a :class:`BuildCache`.

    Args:
        info: the device (from :func:`~gpautotune.problems.opencl.select_device`).
    """

    def __init__(self, info: DeviceInfo) -> None:
        import pyopencl as cl

        self.info = info
        self.device: cl.Device = open_device(info)
        self.context: cl.Context = cl.Context([self.device])
        self.queue: cl.CommandQueue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self.builds = BuildCache(self.context, self.device)

    def metadata(self) -> dict[str, Any]:
        """Device, platform and driver, stored with every measurement."""
        i = self.info
        return {
            "device": i.device,
            "platform": i.platform,
            "platform_version": i.platform_version,
            "device_version": i.device_version,
            "driver_version": i.driver_version,
        }
