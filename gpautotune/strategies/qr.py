"""Iterative quantile regression on random samples (QR, "RQ" in seed 000)."""

from __future__ import annotations

from collections.abc import Sequence

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies.lm import LinearModelSearch

__all__ = ["QuantileRegressionSearch"]


@register("qr")
class QuantileRegressionSearch(LinearModelSearch):
    """The lm scheme with a quantile regression (statsmodels ``QuantReg``) at ``quantile``
    instead of least squares: the model follows the fast tail of each slice rather than
    its mean, which suits heteroscedastic run times (seed 000 §7.2). Factors are ranked
    by Wald tests of the quantile fit; when its covariance cannot be estimated (small
    samples at extreme quantiles), by the least-squares F-test on the same data.

    Args:
        quantile: the regression quantile ``tau`` in (0, 1).
        formula, samples, fix, enumerate_last, candidates: as for ``lm``.
    """

    def __init__(
        self,
        space: Space,
        *,
        seed: int | None = None,
        quantile: float = 0.05,
        formula: str = "linear",
        samples: Sequence[int] = (50, 40, 20, 5),
        fix: Sequence[int | str] = (2, 1, 1, 1),
        enumerate_last: int = 16,
        candidates: int = 10_000,
    ) -> None:
        if not 0.0 < quantile < 1.0:
            raise ConfigError(f"qr: quantile must lie in (0, 1), got {quantile}")
        self.quantile = float(quantile)
        super().__init__(
            space,
            seed=seed,
            formula=formula,
            samples=samples,
            fix=fix,
            enumerate_last=enumerate_last,
            candidates=candidates,
        )
