"""Your own kernel as a tuning problem: ``opencl-kernel`` and ``c-kernel``.

A kernel source with tunable ``#define`` parameters, its arguments (NumPy data, or
generators in a YAML file), the work geometry, an optional reference answer and the
objective: built, checked and timed per configuration on the machinery of the built-in
kernels (build cache, launch limits, event timing, isolated worker with timeout for
OpenCL; the SPAPT compile/run runner for C). :func:`gpautotune.kernel.tune_kernel`, one
layer up, is the one-call Python entry point, in the style of Kernel Tuner's
``tune_kernel``.
"""

from gpautotune.problems.kernel._answer import Answer, compare_outputs
from gpautotune.problems.kernel._arguments import ArgumentSpec
from gpautotune.problems.kernel._c import CKernelProblem
from gpautotune.problems.kernel._factories import c_kernel, opencl_kernel
from gpautotune.problems.kernel._geometry import Geometry, geometry
from gpautotune.problems.kernel._opencl import OpenCLKernelProblem
from gpautotune.problems.kernel._params import space_from_tune_params
from gpautotune.problems.kernel._problem import KernelProblem
from gpautotune.problems.kernel._spec import KernelSpec, Objective, kernel_spec

__all__ = [
    "Answer",
    "ArgumentSpec",
    "CKernelProblem",
    "Geometry",
    "KernelProblem",
    "KernelSpec",
    "Objective",
    "OpenCLKernelProblem",
    "c_kernel",
    "compare_outputs",
    "geometry",
    "kernel_spec",
    "opencl_kernel",
    "space_from_tune_params",
]
