"""One device opened for measuring: context, profiling queue and build cache."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpautotune.problems.opencl.build import BuildCache
from gpautotune.problems.opencl.devices import DeviceInfo, assigned_device, open_device

if TYPE_CHECKING:
    import pyopencl as cl

__all__ = ["DeviceSession"]


class DeviceSession:
    """An OpenCL context on one device with a profiling queue and a :class:`BuildCache`.

    The device is ``info``, unless this process was given its own device (a Dask worker
    with :data:`~gpautotune.problems.opencl.DEVICE_ENV` set; see
    :func:`~gpautotune.problems.opencl.assigned_device`).

    Args:
        info: the device (from :func:`~gpautotune.problems.opencl.select_device`).
    """

    def __init__(self, info: DeviceInfo) -> None:
        import pyopencl as cl

        self.info = info = assigned_device(info)
        self.device: cl.Device = open_device(info)
        self.context: cl.Context = cl.Context([self.device])
        self.queue: cl.CommandQueue = cl.CommandQueue(
            self.context, properties=cl.command_queue_properties.PROFILING_ENABLE
        )
        self.builds = BuildCache(self.context, self.device)
        self.pci_bus = _pci_bus(self.device)

    def metadata(self) -> dict[str, Any]:
        """Device, platform and driver, stored with every measurement."""
        i = self.info
        return {
            "device": i.device,
            "device_index": f"{i.platform_index}:{i.device_index}",
            **({"pci_bus": self.pci_bus} if self.pci_bus else {}),
            "platform": i.platform,
            "platform_version": i.platform_version,
            "device_version": i.device_version,
            "driver_version": i.driver_version,
        }


def _pci_bus(device: cl.Device) -> str | None:
    """The device's PCI address where the driver tells it (NVIDIA's and AMD's
    extensions), to tell identical GPUs apart; None otherwise."""
    import pyopencl as cl

    for read in (
        lambda d: f"{d.pci_bus_id_nv:02x}:{d.pci_slot_id_nv:02x}",
        lambda d: f"{d.topology_amd.bus:02x}:{d.topology_amd.device:02x}",
    ):
        try:
            return read(device)
        except (cl.Error, AttributeError):
            continue
    return None
