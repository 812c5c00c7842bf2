"""Sobol sensitivity indices of a function or of a fitted GP, with honest intervals.

Used by the strategies (GPR's "screen, then tune") and by the analysis package (which
explains stored runs); depends only on the space and the surrogate.
"""

from gpautotune.sensitivity._indices import (
    DOMAINS,
    Domain,
    SobolResult,
    check_domain,
    check_paths,
    sobol_indices,
    surrogate_indices,
)
from gpautotune.sensitivity._paths import (
    FunctionPaths,
    PathSampler,
    PosteriorMean,
    PosteriorPaths,
)

__all__ = [
    "DOMAINS",
    "Domain",
    "FunctionPaths",
    "PathSampler",
    "PosteriorMean",
    "PosteriorPaths",
    "SobolResult",
    "check_domain",
    "check_paths",
    "sobol_indices",
    "surrogate_indices",
]
