"""OpenCL machinery shared by the kernel problems: devices, builds, launch limits, timing.

Importing this package does not import PyOpenCL; devices are touched only when one is
listed, selected or opened.
"""

from gpautotune.problems.opencl.bandwidth import CopyBandwidth, measure_copy_bandwidth
from gpautotune.problems.opencl.build import BuildCache, BuildFailure, BuiltProgram
from gpautotune.problems.opencl.devices import (
    DEVICE_ENV,
    DeviceInfo,
    assigned_device,
    compiler_problem,
    list_devices,
    open_device,
    register_icd,
    select_device,
    usable_device,
)
from gpautotune.problems.opencl.launch import (
    REFUSED_METRIC,
    LaunchLimits,
    refused_launches,
    timed_launch,
)
from gpautotune.problems.opencl.session import DeviceSession

__all__ = [
    "DEVICE_ENV",
    "BuildCache",
    "BuildFailure",
    "BuiltProgram",
    "CopyBandwidth",
    "DeviceInfo",
    "DeviceSession",
    "LaunchLimits",
    "REFUSED_METRIC",
    "assigned_device",
    "compiler_problem",
    "list_devices",
    "measure_copy_bandwidth",
    "open_device",
    "refused_launches",
    "register_icd",
    "select_device",
    "timed_launch",
    "usable_device",
]
