"""Length-scale draws from the Laplace approximation (``surrogate/_laplace.py``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gpautotune.surrogate import GPSettings, GPSurrogate, lengthscale_draws, lengthscales
from gpautotune.surrogate._gp import SurrogateError
from gpautotune.surrogate._laplace import log_lengthscale_hessian
from gpautotune.surrogate._mll import exact_mll_closure


def _fitted(settings: GPSettings | None = None, rows: int = 30) -> tuple[GPSurrogate, int]:
    rng = np.random.default_rng(3)
    X = rng.random((rows, 4))
    y = np.exp(np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.01 * rng.standard_normal(rows))
    gp = GPSurrogate(settings or GPSettings(), 3, 1)
    gp.fit(X, y, seed=0)
    return gp, rows


def test_the_hessian_is_the_loss_curvature_in_log_length_scale() -> None:
    """The Hessian (central differences of the fit's gradient, chain rule to log
    length-scale) equals the second differences of the fit's loss itself, and the
    model's length-scales are left as they were."""
    gp, rows = _fitted()
    base = gp.model.covar_module.base_kernel
    kept = base.lengthscale.detach().clone()
    hessian = log_lengthscale_hessian(gp.model)
    assert torch.equal(base.lengthscale.detach(), kept)
    assert np.allclose(hessian, hessian.T)

    closure = exact_mll_closure(gp.model, {"raw_lengthscale": base.raw_lengthscale})
    theta = torch.log(kept.flatten()).numpy()

    def loss(at: np.ndarray) -> float:
        with lengthscales(gp.model, np.exp(at)):
            return rows * float(closure()[0].detach())

    h = 1e-3
    for j in range(3):
        step = np.eye(3)[j] * h
        second = (loss(theta + step) - 2 * loss(theta) + loss(theta - step)) / h**2
        assert abs(second - hessian[j, j]) <= 1e-3 * max(1.0, abs(second))


def test_draws_spread_around_the_fit_by_its_curvature() -> None:
    """Many draws centre on the fitted log length-scales, with the covariance the
    Hessian's inverse (floored precision), at least the lower bound, and repeat for a seed."""
    gp, _ = _fitted()
    base = gp.model.covar_module.base_kernel
    theta = np.log(base.lengthscale.detach().flatten().numpy())
    draws = lengthscale_draws(gp.model, 20_000, np.random.default_rng(0))
    assert draws.shape == (20_000, 3) and draws.min() >= 2.5e-2
    assert np.array_equal(draws[:5], lengthscale_draws(gp.model, 5, np.random.default_rng(0)))
    precision, vectors = np.linalg.eigh(log_lengthscale_hessian(gp.model))
    covariance = vectors @ np.diag(1 / np.maximum(precision, 1 / 3)) @ vectors.T
    logs = np.log(draws)
    unclipped = (draws > 2.5e-2).all(axis=1)
    assert np.allclose(np.median(logs[unclipped], axis=0), theta, atol=0.05)
    sd = np.sqrt(np.diag(covariance))
    assert (sd < 0.5).sum() == 2  # the two informative inputs; the third is flat
    assert np.allclose(np.std(logs, axis=0)[sd < 0.5], sd[sd < 0.5], rtol=0.05)


def test_the_context_restores_the_length_scales_after_an_error() -> None:
    gp, _ = _fitted()
    base = gp.model.covar_module.base_kernel
    kept = base.lengthscale.detach().clone()
    with pytest.raises(RuntimeError), lengthscales(gp.model, np.full(3, 0.5)):
        assert torch.allclose(base.lengthscale.detach(), torch.full_like(kept, 0.5))
        raise RuntimeError("inside")
    assert torch.equal(base.lengthscale.detach(), kept)


def test_bounded_length_scales_are_refused() -> None:
    gp, _ = _fitted(GPSettings(lengthscale_max=2.0))
    with pytest.raises(SurrogateError, match="untransformed"):
        lengthscale_draws(gp.model, 4, np.random.default_rng(0))
