"""Iterative quantile regression on random samples (QR, "RQ" in seed 000)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import strategy_settings
from gpautotune.strategies.lm import LinearModelSearch, LMSettings

__all__ = ["QRSettings", "QuantileRegressionSearch"]


@strategy_settings
class QRSettings(LMSettings):
    """Options of :class:`QuantileRegressionSearch`: those of :class:`LMSettings` and the
    quantile.

    Attributes:
        quantile: the regression quantile ``tau`` in (0, 1).
    """

    quantile: Annotated[float, Field(gt=0, lt=1)] = 0.05


@register("qr")
class QuantileRegressionSearch(LinearModelSearch):
    """The lm scheme with a quantile regression (statsmodels ``QuantReg``) at ``quantile``
    instead of least squares: the model follows the fast tail of each slice rather than
    its mean, which suits heteroscedastic run times (seed 000 §7.2). Factors are ranked
    by Wald tests of the quantile fit; when its covariance cannot be estimated (small
    samples at extreme quantiles), by the least-squares F-test on the same data.

    The options are the fields of :class:`QRSettings`.
    """

    Settings = QRSettings
    options: QRSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.quantile = self.options.quantile
