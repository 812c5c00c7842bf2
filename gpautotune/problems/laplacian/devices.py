"""Moved to :mod:`gpautotune.problems.opencl.devices` (shared by every OpenCL problem)."""

from gpautotune.problems.opencl.devices import (
    COMPILER_HINT,
    INSTALL_HINT,
    INTEL_CPU_LIBRARY,
    KNOWN_LIBRARIES,
    NVIDIA_OPENCL_LIBRARY,
    DeviceInfo,
    compiler_problem,
    list_devices,
    open_device,
    register_icd,
    select_device,
)

__all__ = [
    "COMPILER_HINT",
    "DeviceInfo",
    "INSTALL_HINT",
    "INTEL_CPU_LIBRARY",
    "KNOWN_LIBRARIES",
    "NVIDIA_OPENCL_LIBRARY",
    "compiler_problem",
    "list_devices",
    "open_device",
    "register_icd",
    "select_device",
]
