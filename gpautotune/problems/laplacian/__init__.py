"""The seeds' Laplacian OpenCL kernel: search space, generator, reference, runner, problem.

Devices, builds, launch limits and the copy-bandwidth probe live in
:mod:`gpautotune.problems.opencl` (re-exported here for existing code).

Importing this package does not import PyOpenCL; devices are touched only when a
problem, runner or device listing is made.
"""

from gpautotune.problems.laplacian.bandwidth import bound_time_per_pixel
from gpautotune.problems.laplacian.generator import GeneratedKernel, KernelPlan, generate_kernel
from gpautotune.problems.laplacian.problem import K40C_OPTIMUM, NAIVE_CONFIG, LaplacianProblem
from gpautotune.problems.laplacian.reference import compare_interior, laplacian_reference
from gpautotune.problems.laplacian.runner import LaplacianRunner
from gpautotune.problems.laplacian.sizes import SIZE_PRESETS, resolve_sizes
from gpautotune.problems.laplacian.space import laplacian_space
from gpautotune.problems.opencl import (
    BuildCache,
    BuildFailure,
    CopyBandwidth,
    DeviceInfo,
    list_devices,
    measure_copy_bandwidth,
    register_icd,
    select_device,
)

__all__ = [
    "BuildCache",
    "BuildFailure",
    "CopyBandwidth",
    "DeviceInfo",
    "GeneratedKernel",
    "K40C_OPTIMUM",
    "KernelPlan",
    "LaplacianProblem",
    "LaplacianRunner",
    "NAIVE_CONFIG",
    "SIZE_PRESETS",
    "bound_time_per_pixel",
    "compare_interior",
    "generate_kernel",
    "laplacian_reference",
    "laplacian_space",
    "list_devices",
    "measure_copy_bandwidth",
    "register_icd",
    "resolve_sizes",
    "select_device",
]
