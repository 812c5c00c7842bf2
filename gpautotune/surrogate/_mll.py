"""The exact marginal likelihood of the surrogate's own GP, without GPyTorch's layers.

Fitting spends most of its time in the L-BFGS closure, and at a hundred or so
observations most of that is GPyTorch's module, lazy-tensor and settings machinery around
a few dense operations on small matrices. :func:`exact_mll_closure` computes the same
loss with the same tensor operations, in the same order, as GPyTorch's
``ExactMarginalLogLikelihood`` does for the model :class:`GPSurrogate` builds (a
``SingleTaskGP`` with an ARD Matérn or RBF kernel on the first ``d`` inputs scaled by an
output scale, a learned homoscedastic noise, a :class:`TrendMean`, no input transform),
so that the value and the gradients are the same floats, and a fit takes the same L-BFGS
steps, only faster. Any other model gets ``None``: the caller keeps BoTorch's closure.
The unit tests hold the two closures to bitwise equality.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from botorch.models import SingleTaskGP
from botorch.optim.closures import ForwardBackwardClosure
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch.distributions.multivariate_normal import _batch_mahalanobis

from gpautotune.surrogate._trend import TrendMean

__all__ = ["exact_mll_closure"]

_LOG_2PI = math.log(2 * math.pi)


def exact_mll_closure(
    model: SingleTaskGP, parameters: dict[str, torch.Tensor]
) -> ForwardBackwardClosure | None:
    """A closure for ``fit_gpytorch_mll_scipy`` returning the negative exact marginal
    log likelihood per observation and the gradients of ``parameters``, or ``None``
    where ``model`` is not one this module reproduces."""
    covar, likelihood = model.covar_module, model.likelihood
    if not (
        isinstance(covar, ScaleKernel)
        and isinstance(covar.base_kernel, MaternKernel | RBFKernel)
        and type(likelihood) is GaussianLikelihood
        and isinstance(model.mean_module, TrendMean)
        and getattr(model, "input_transform", None) is None
        and getattr(model, "outcome_transform", None) is None
        and covar.base_kernel.active_dims is not None
        and model.train_inputs[0].dim() == 2
        and covar.base_kernel.ard_num_dims not in (None, 1)  # GPyTorch's own autograd there
    ):
        return None
    return ForwardBackwardClosure(forward=_loss(model), parameters=parameters)


def _loss(model: SingleTaskGP) -> Callable[[], torch.Tensor]:
    covar = model.covar_module
    base = covar.base_kernel
    X, y = model.train_inputs[0], model.train_targets
    n = y.shape[-1]
    priors = [(prior, closure, module) for _, module, prior, closure, _ in model.named_priors()]
    kernel = _matern(base.nu) if isinstance(base, MaternKernel) else _rbf

    def loss() -> torch.Tensor:
        # ExactGP.__call__ in training: the prior's mean and covariance at the inputs
        mean = model.mean_module(X)
        x = X.index_select(-1, base.active_dims)
        # GaussianLikelihood.marginal: the noise as a constant diagonal, added densely
        noise = model.likelihood.noise_covar.noise.unsqueeze(-2).expand(1, 1).contiguous()
        k = kernel(x, base).mul(covar.outputscale.view(1, 1))
        full = (0 + k + torch.diag_embed(noise.view(1).expand(n))).contiguous()
        # MultivariateNormal.log_prob from the Cholesky factor (torch's formula)
        tril = psd_safe_cholesky(full).contiguous()
        diff = y - mean
        mahalanobis = _batch_mahalanobis(tril, diff)
        half_log_det = tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        res = -0.5 * (n * _LOG_2PI + mahalanobis) - half_log_det
        for prior, closure, module in priors:  # ExactMarginalLogLikelihood._add_other_terms
            res.add_(prior.log_prob(closure(module)).view(-1).sum(dim=-1))
        return -res.div_(n)

    return loss


def _scaled(x: torch.Tensor, base: MaternKernel) -> tuple[torch.Tensor, torch.Tensor]:
    # Each use reads the length-scales anew, as GPyTorch's forward does: a constrained
    # length-scale is then a fresh transform of the raw one each time, as there.
    centre = x.mean(dim=-2, keepdim=True)
    return (x - centre).div(base.lengthscale), (x - centre).div(base.lengthscale)


def _distance(x1: torch.Tensor, x2: torch.Tensor, square: bool = False) -> torch.Tensor:
    """GPyTorch's ``sq_dist``/``dist`` for ``x1 == x2`` while a gradient is taken."""
    adjustment = x1.mean(-2, keepdim=True)
    x1 = x1 - adjustment
    x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
    x1_pad = torch.ones_like(x1_norm)
    x2 = x2 - adjustment
    x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
    x2_pad = torch.ones_like(x2_norm)
    res = torch.cat([-2.0 * x1, x1_norm, x1_pad], dim=-1).matmul(
        torch.cat([x2, x2_pad, x2_norm], dim=-1).transpose(-2, -1)
    )
    res = res.clamp_min_(0)
    return res if square else res.clamp_min_(1e-30).sqrt_()


def _matern(nu: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    root = math.sqrt(nu * 2)

    def kernel(x: torch.Tensor, base: MaternKernel) -> torch.Tensor:
        distance = _distance(*_scaled(x, base))
        exp_component = torch.exp(-root * distance)
        if nu == 0.5:
            return 1 * exp_component
        if nu == 1.5:
            return (math.sqrt(3) * distance).add(1) * exp_component
        return (math.sqrt(5) * distance).add(1).add(5.0 / 3.0 * distance**2) * exp_component

    return kernel


def _rbf(x: torch.Tensor, base: RBFKernel) -> torch.Tensor:
    x1, x2 = x.div(base.lengthscale), x.div(base.lengthscale)
    return _distance(x1, x2, square=True).div_(-2).exp_()
