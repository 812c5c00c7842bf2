"""Surrogate models and their building blocks (model formulas, bases)."""

from gpautotune.surrogate._formula import SHORTCUTS, Basis, Term, build_basis
from gpautotune.surrogate._linear import (
    LinearFit,
    Transform,
    boxcox_lambda,
    estimable_columns,
    fit_linear,
)

__all__ = [
    "SHORTCUTS",
    "Basis",
    "LinearFit",
    "Term",
    "Transform",
    "boxcox_lambda",
    "build_basis",
    "estimable_columns",
    "fit_linear",
]
