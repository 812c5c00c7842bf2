"""Surrogate models and their building blocks: the GP with trend terms, model formulas,
linear fits."""

from gpautotune.surrogate._formula import SHORTCUTS, Basis, Term, build_basis
from gpautotune.surrogate._gp import (
    FitReport,
    GPSettings,
    GPSurrogate,
    Hyperparameters,
    Kernel,
    SurrogateError,
    torch_threads,
)
from gpautotune.surrogate._linear import (
    LinearFit,
    Transform,
    boxcox_lambda,
    estimable_columns,
    fit_linear,
)
from gpautotune.surrogate._trend import TrendMean

__all__ = [
    "SHORTCUTS",
    "Basis",
    "FitReport",
    "GPSettings",
    "GPSurrogate",
    "Hyperparameters",
    "Kernel",
    "LinearFit",
    "SurrogateError",
    "Term",
    "Transform",
    "TrendMean",
    "boxcox_lambda",
    "build_basis",
    "estimable_columns",
    "fit_linear",
    "torch_threads",
]
