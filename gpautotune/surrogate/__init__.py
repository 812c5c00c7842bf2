"""Surrogate models and their building blocks: the GP with trend terms, a random forest,
model formulas, linear fits."""

from gpautotune.surrogate._forest import ForestSurrogate
from gpautotune.surrogate._formula import SHORTCUTS, Basis, Term, build_basis
from gpautotune.surrogate._gp import (
    FitReport,
    GPSurrogate,
    Hyperparameters,
    SurrogateError,
    torch_threads,
)
from gpautotune.surrogate._gp_settings import GPSettings, Kernel
from gpautotune.surrogate._kriging import KrigingModel, KrigingSettings, KrigingSurrogate
from gpautotune.surrogate._laplace import lengthscale_draws, lengthscales
from gpautotune.surrogate._linear import (
    LinearFit,
    Transform,
    boxcox_lambda,
    estimable_columns,
    fit_linear,
)
from gpautotune.surrogate._monomials import Monomial, predicate_monomials
from gpautotune.surrogate._trend import TrendMean

__all__ = [
    "SHORTCUTS",
    "Basis",
    "FitReport",
    "ForestSurrogate",
    "GPSettings",
    "GPSurrogate",
    "Hyperparameters",
    "Kernel",
    "KrigingModel",
    "KrigingSettings",
    "KrigingSurrogate",
    "LinearFit",
    "Monomial",
    "SurrogateError",
    "Term",
    "Transform",
    "TrendMean",
    "boxcox_lambda",
    "build_basis",
    "estimable_columns",
    "fit_linear",
    "lengthscale_draws",
    "lengthscales",
    "predicate_monomials",
    "torch_threads",
]
