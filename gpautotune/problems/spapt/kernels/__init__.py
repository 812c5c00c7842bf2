"""The 18 kernels of the specification, one module each, imported on first use.

The first 16 are those of the thesis' Table 12.1 (in its order); fdtd and covariance are
in the SPAPT suite but not in the thesis.
"""

from __future__ import annotations

import importlib

from gpautotune.exceptions import ConfigError
from gpautotune.problems.spapt._kernel import Kernel

__all__ = ["KERNEL_NAMES", "THESIS_KERNELS", "get_kernel"]

THESIS_KERNELS = (
    "atax",
    "dgemv3",
    "gemver",
    "gesummv",
    "hessian",
    "mm",
    "mvt",
    "tensor",
    "trmm",
    "bicg",
    "lu",
    "adi",
    "jacobi",
    "seidel",
    "stencil3d",
    "correlation",
)
KERNEL_NAMES = (*THESIS_KERNELS, "fdtd", "covariance")


def get_kernel(name: str) -> Kernel:
    """The kernel called ``name``.

    Raises:
        ConfigError: no such kernel (the message lists them).
    """
    if name not in KERNEL_NAMES:
        raise ConfigError(f"unknown SPAPT kernel {name!r}; kernels: {', '.join(KERNEL_NAMES)}")
    return importlib.import_module(f"{__name__}.{name}").KERNEL
