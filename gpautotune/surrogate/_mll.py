"""The exact marginal likelihood of the surrogate's own GP, without GPyTorch's layers.

Fitting spends most of its time in the L-BFGS closure, and at a hundred or so
observations most of that is GPyTorch's module, lazy-tensor and settings machinery around
a few dense operations on small matrices. :func:`exact_mll_closure` computes the same
loss with the same tensor operations (the kernel's own ``forward``), in the same order, as
GPyTorch's ``ExactMarginalLogLikelihood`` does for the model :class:`GPSurrogate` builds (a
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

    def loss() -> torch.Tensor:
        # ExactGP.__call__ in training: the prior's mean and covariance at the inputs
        mean = model.mean_module(X)
        x = X.index_select(-1, base.active_dims)
        # GaussianLikelihood.marginal: the noise as a constant diagonal, added densely
        noise = model.likelihood.noise_covar.noise.unsqueeze(-2).expand(1, 1).contiguous()
        # the kernel's own forward (ScaleKernel's calls the base kernel's), as GPyTorch's
        # lazy kernel tensor evaluates it, without the module call and lazy tensor around it
        k = covar.forward(x, x)
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
