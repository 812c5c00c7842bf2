"""Surrogate models: the GP with trend terms, and model formulas."""

from gpautotune.surrogate._formula import Basis, build_basis
from gpautotune.surrogate._gp import FitReport, GPSettings, GPSurrogate, SurrogateError
from gpautotune.surrogate._trend import TrendMean

__all__ = ["Basis", "FitReport", "GPSettings", "GPSurrogate", "SurrogateError", "TrendMean", "build_basis"]
