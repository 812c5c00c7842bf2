"""The exact marginal likelihood of the surrogate's own GP, without GPyTorch's layers.

Fitting spends most of its time in the L-BFGS closure, and at a hundred or so
observations most of that is GPyTorch's module, lazy-tensor and settings machinery around
a few dense operations on small matrices. :func:`exact_mll_closure` computes the same
loss with the same tensor operations (the Matérn kernel's and the priors' written out,
their constant parts computed once; other kernels' own ``forward``), in the same order,
as GPyTorch's ``ExactMarginalLogLikelihood`` does for the model :class:`GPSurrogate` builds (a
``SingleTaskGP`` with an ARD Matérn or RBF kernel on the first ``d`` inputs scaled by an
output scale, a learned homoscedastic noise, a :class:`TrendMean`, no input transform),
so that the value and the gradients are the same floats, and a fit takes the same L-BFGS
steps, only faster. Any other model gets ``None``: the caller keeps BoTorch's closure.
The unit tests hold the two closures to bitwise equality.

:func:`closed_form_closure` (the ``gradient="closed_form"`` setting) is faster and not
bitwise: for the default kernel (ARD Matérn 5/2, length-scales and noise untransformed) it
writes the likelihood's gradient by hand, ``∂L/∂θ = tr(G ∂K/∂θ)`` with ``G = (ααᵀ −
K⁻¹)/2`` and ``α = K⁻¹(y − m)`` (Rasmussen & Williams 2006, eq. 5.9), the length-scales'
``∂K/∂ℓ_j = σ² (5/3) (1 + √5 r) e^{−√5 r} Δ_j²/ℓ_j³`` summed against ``G`` in two matrix
products, and leaves autograd only the priors. Its gradients agree with GPyTorch's to about
1e-14 relative, so a fit takes other L-BFGS steps and ends elsewhere within the optimiser's
tolerance: the runs it makes are other runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from botorch.models import SingleTaskGP
from botorch.optim.closures import ForwardBackwardClosure
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import GaussianLikelihood
from gpytorch.module import Module
from gpytorch.priors import GammaPrior, LogNormalPrior, NormalPrior, Prior
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch.distributions import Normal, constraints
from torch.distributions.multivariate_normal import _batch_mahalanobis

from gpautotune.surrogate._trend import TrendMean

__all__ = ["closed_form_closure", "exact_mll_closure"]

_LOG_2PI = math.log(2 * math.pi)
_ROOT5 = math.sqrt(5)


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
    priors = [_log_prior(p, closure, m) for _, m, p, closure, _ in model.named_priors()]
    x = X.index_select(-1, base.active_dims)
    kernel = _kernel(covar, x)

    def loss() -> torch.Tensor:
        # ExactGP.__call__ in training: the prior's mean and covariance at the inputs
        mean = model.mean_module(X)
        # GaussianLikelihood.marginal: the noise as a constant diagonal, added densely
        noise = model.likelihood.noise_covar.noise.unsqueeze(-2).expand(1, 1).contiguous()
        # the kernel's own forward (ScaleKernel's calls the base kernel's), as GPyTorch's
        # lazy kernel tensor evaluates it, without the module call and lazy tensor around it
        k = kernel()
        full = (0 + k + torch.diag_embed(noise.view(1).expand(n))).contiguous()
        # MultivariateNormal.log_prob from the Cholesky factor (torch's formula)
        tril = psd_safe_cholesky(full).contiguous()
        diff = y - mean
        mahalanobis = _batch_mahalanobis(tril, diff)
        half_log_det = tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        res = -0.5 * (n * _LOG_2PI + mahalanobis) - half_log_det
        for log_prior in priors:  # ExactMarginalLogLikelihood._add_other_terms
            res.add_(log_prior().view(-1).sum(dim=-1))
        return -res.div_(n)

    return loss


def _kernel(covar: ScaleKernel, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    """``covar.forward(x, x)`` as a closure. For an output scale times an ARD Matérn
    kernel, the operations of GPyTorch's ``MaternKernel.forward`` and ``sq_dist`` (the
    path they take where ``x1`` and ``x2`` are the same inputs and the length-scales need
    gradients) in their order, the inputs centred once: they do not change between
    calls. The same floats, and the same graph for autograd, without the layers."""
    base = covar.base_kernel
    if not (
        type(covar) is ScaleKernel
        and type(base) is MaternKernel
        and base.nu in (1.5, 2.5)
        and base.ard_num_dims not in (None, 1)
        and not covar.batch_shape
        and not x.requires_grad
    ):
        return lambda: covar.forward(x, x)
    centred = x - x.mean(dim=-2, keepdim=True)
    root = math.sqrt(base.nu * 2)

    def forward() -> torch.Tensor:
        # the length-scales read twice, as there: a bounded one's transform is two nodes
        x1 = centred.div(base.lengthscale)
        x2 = centred.div(base.lengthscale)
        if not (x1.requires_grad and torch.equal(x1, x2)):  # GPyTorch's other paths
            return covar.forward(x, x)
        # sq_dist(x1, x2, x1_eq_x2=True) with inputs that need gradients, then dist's root
        adjustment = x1.mean(-2, keepdim=True)
        x1 = x1 - adjustment
        x1_norm = x1.pow(2).sum(dim=-1, keepdim=True)
        x1_pad = torch.ones_like(x1_norm)
        x2 = x2 - adjustment
        x2_norm = x2.pow(2).sum(dim=-1, keepdim=True)
        x2_pad = torch.ones_like(x2_norm)
        x1_ = torch.cat([-2.0 * x1, x1_norm, x1_pad], dim=-1)
        x2_ = torch.cat([x2, x2_pad, x2_norm], dim=-1)
        distance = x1_.matmul(x2_.transpose(-2, -1)).clamp_min_(0).clamp_min_(1e-30).sqrt_()
        exp_component = torch.exp(-root * distance)
        if base.nu == 1.5:
            constant_component = (math.sqrt(3) * distance).add(1)
        else:
            constant_component = (math.sqrt(5) * distance).add(1).add(5.0 / 3.0 * distance**2)
        outputscales = covar.outputscale
        return (constant_component * exp_component).mul(
            outputscales.view(*outputscales.shape, 1, 1)
        )

    return forward


def _log_prior(prior: Prior, closure: Callable, module: Module) -> Callable[[], torch.Tensor]:
    """``prior.log_prob(closure(module))`` as a closure. For the surrogate's priors
    (log-normal, normal and gamma, untransformed), torch's ``log_prob`` formulas in their
    order, the terms that hold no parameter computed once: the same floats and graph,
    without ``torch.distributions``' layers. A log-normal prior's support is checked as
    its ``validate_args`` asks."""
    plain = getattr(prior, "_transform", None) is None
    if plain and type(prior) is LogNormalPrior:
        normal, check = _normal_log_prob(prior.base_dist), prior._validate_args

        def log_normal() -> torch.Tensor:
            value = closure(module)
            if check and not bool(constraints.positive.check(value).all()):
                return prior.log_prob(value)  # torch's error, naming the value
            x = value.log()  # ExpTransform's inverse, then its log |det J| = x
            return (0.0 - x) + normal(x)

        return log_normal
    if plain and type(prior) is NormalPrior and not prior._validate_args:
        normal = _normal_log_prob(prior)
        return lambda: normal(closure(module))
    if plain and type(prior) is GammaPrior and not prior._validate_args:
        concentration, rate = prior.concentration, prior.rate
        first, shape, last = (
            torch.xlogy(concentration, rate),
            concentration - 1,
            torch.lgamma(concentration),
        )

        def gamma() -> torch.Tensor:
            value = torch.as_tensor(closure(module), dtype=rate.dtype, device=rate.device)
            return first + torch.xlogy(shape, value) - rate * value - last

        return gamma
    return lambda: prior.log_prob(closure(module))


def _normal_log_prob(normal: Normal) -> Callable[[torch.Tensor], torch.Tensor]:
    """``Normal.log_prob`` without validation, its constant terms computed once."""
    loc, twice_var, log_scale = normal.loc, 2 * normal.scale**2, normal.scale.log()
    constant = math.log(math.sqrt(2 * math.pi))
    return lambda value: -((value - loc) ** 2) / twice_var - log_scale - constant


def closed_form_closure(
    model: SingleTaskGP, parameters: dict[str, torch.Tensor]
) -> Callable[[], tuple[torch.Tensor, list[torch.Tensor]]] | None:
    """A closure for ``fit_gpytorch_mll_scipy`` with the same loss as
    :func:`exact_mll_closure` and its gradient in closed form (see the module docstring),
    or ``None`` where ``model`` is not the default kind: an ARD Matérn 5/2 kernel on the
    first ``d`` inputs with untransformed length-scales (no upper bound), a learned
    untransformed noise, a :class:`TrendMean`, no input or outcome transform."""
    covar, likelihood = model.covar_module, model.likelihood
    base = covar.base_kernel if isinstance(covar, ScaleKernel) else None
    names = {
        "likelihood.noise_covar.raw_noise",
        "model.mean_module.constant",
        "model.mean_module.weights",
        "model.covar_module.raw_outputscale",
        "model.covar_module.base_kernel.raw_lengthscale",
    }
    if not (
        type(base) is MaternKernel
        and base.nu == 2.5
        and base.ard_num_dims not in (None, 1)
        and base.active_dims is not None
        and not base.raw_lengthscale_constraint.enforced
        and type(likelihood) is GaussianLikelihood
        and not likelihood.noise_covar.raw_noise_constraint.enforced
        and isinstance(model.mean_module, TrendMean)
        and getattr(model, "input_transform", None) is None
        and getattr(model, "outcome_transform", None) is None
        and model.train_inputs[0].dim() == 2
        and set(parameters) == names
    ):
        return None
    X, y = model.train_inputs[0], model.train_targets
    n = y.shape[-1]
    mean_module = model.mean_module
    features = X[:, mean_module.offset :]
    x = X.index_select(-1, base.active_dims)
    x = x - x.mean(0)  # distances do not move with the origin
    x2 = x * x
    priors = [_log_prior(p, closure, m) for _, m, p, closure, _ in model.named_priors()]

    def closure() -> tuple[torch.Tensor, list[torch.Tensor]]:
        with torch.no_grad():
            ls = base.lengthscale.view(-1)
            scale = covar.outputscale
            xs = x / ls
            sq = (xs * xs).sum(1)
            r2 = (sq[:, None] + sq[None, :] - 2 * xs @ xs.T).clamp_min_(0)
            r2.diagonal().zero_()
            r = r2.sqrt()
            decay, poly = torch.exp(-_ROOT5 * r), 1 + _ROOT5 * r
            K = scale * (poly + (5.0 / 3.0) * r2) * decay
            full = K.clone()
            full.diagonal().add_(likelihood.noise.view(-1))
            resid = (y - (mean_module.constant + features @ mean_module.weights)).unsqueeze(-1)
            L = psd_safe_cholesky(full)
            alpha = torch.cholesky_solve(resid, L)
            value = -0.5 * (resid * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * _LOG_2PI
            G = 0.5 * (alpha @ alpha.T - torch.cholesky_inverse(L))
            W = G * (scale * 5.0 / 3.0) * poly * decay
            by_dim = 2 * (x2.T @ W.sum(1)) - 2 * (x * (W @ x)).sum(0)
            a = alpha.view(-1)
            grads = {  # of the log likelihood, by raw parameter
                "likelihood.noise_covar.raw_noise": G.diagonal().sum(),
                "model.mean_module.constant": a.sum(),
                "model.mean_module.weights": features.T @ a,
                # the output scale is a softplus of its raw parameter
                "model.covar_module.raw_outputscale": (G * K).sum()
                / scale
                * torch.sigmoid(covar.raw_outputscale),
                "model.covar_module.base_kernel.raw_lengthscale": by_dim / ls**3,
            }
        for p in parameters.values():
            p.grad = None
        prior = sum(log_prior().view(-1).sum() for log_prior in priors)
        (-prior / n).backward()  # the priors' gradients, by autograd
        out = []
        for name, p in parameters.items():
            prior_grad = torch.zeros_like(p) if p.grad is None else p.grad
            p.grad = prior_grad - grads[name].view_as(p) / n
            out.append(p.grad)
        return -(value + prior.detach()) / n, out

    return closure
