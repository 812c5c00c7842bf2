"""SPAPT-style CPU kernels: C generated with Orio's transformations, compiled and timed.

The generator re-implements the loop transformations of the Orio annotations used by
the SPAPT suite (strip-mining tiling, array copy, register tiling, unroll-and-jam,
scalar replacement, OpenMP and vector pragmas, in that fixed order) following
``docs/spapt-kernels.md``; Orio itself is not needed.

Use ``SpaptProblem("bicg")`` or ``make_problem("spapt/bicg")``; ``list_kernels()``
gives the factor counts and space sizes.
"""

from gpautotune.problems.spapt._baseline import BaselineCache, BaselineRecord
from gpautotune.problems.spapt._catalog import KernelSummary, count_valid_by_groups, list_kernels
from gpautotune.problems.spapt._kernel import Kernel
from gpautotune.problems.spapt._problem import PRESETS, SpaptProblem
from gpautotune.problems.spapt._program import generate
from gpautotune.problems.spapt._runner import BuildSettings, Runner, RunOutcome
from gpautotune.problems.spapt.kernels import KERNEL_NAMES, THESIS_KERNELS, get_kernel

__all__ = [
    "BaselineCache",
    "BaselineRecord",
    "BuildSettings",
    "KERNEL_NAMES",
    "Kernel",
    "KernelSummary",
    "PRESETS",
    "RunOutcome",
    "Runner",
    "SpaptProblem",
    "THESIS_KERNELS",
    "count_valid_by_groups",
    "generate",
    "get_kernel",
    "list_kernels",
]
