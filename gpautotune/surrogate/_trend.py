"""Trend terms: a linear model h(x)ᵀβ as the GP's prior mean (universal kriging)."""

from __future__ import annotations

import torch
from gpytorch.means import Mean
from gpytorch.priors import NormalPrior

__all__ = ["TrendMean"]


class TrendMean(Mean):
    """``m(x) = β₀ + Σ_k β_k h_k(x)`` over the trailing feature columns of the input.

    The GP input is ``[encoded parameters (d) | trend features (k)]``; the kernel looks at
    the first ``d`` columns only, this mean at the last ``k``. A Normal(0, ``prior_scale``)
    prior on β (features standardised) keeps the trend from overfitting small designs;
    β is learned with the kernel hyperparameters by maximising the marginal likelihood.

    Shapes: ``x`` is ``batch x n x (d + k)``; the output is ``batch x n``.
    """

    def __init__(self, offset: int, n_features: int, prior_scale: float = 1.0) -> None:
        super().__init__()
        self.offset = offset
        self.register_parameter("constant", torch.nn.Parameter(torch.zeros(1, dtype=torch.float64)))
        self.register_parameter(
            "weights", torch.nn.Parameter(torch.zeros(n_features, dtype=torch.float64))
        )
        if n_features:
            self.register_prior("weights_prior", NormalPrior(0.0, prior_scale), "weights")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = x[..., self.offset :]
        return self.constant + features @ self.weights
