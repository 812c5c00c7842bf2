"""Analysis of tuning results: Sobol sensitivity indices with honest uncertainty."""

from gpautotune.analysis._paths import FunctionPaths, PathSampler, PosteriorMean, PosteriorPaths
from gpautotune.analysis.sensitivity import (
    Domain,
    SobolResult,
    sobol_indices,
    strategy_indices,
    surrogate_indices,
)

__all__ = [
    "Domain",
    "FunctionPaths",
    "PathSampler",
    "PosteriorMean",
    "PosteriorPaths",
    "SobolResult",
    "sobol_indices",
    "strategy_indices",
    "surrogate_indices",
]
