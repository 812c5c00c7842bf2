"""Length-scale draws from a Laplace approximation of their posterior.

A fitted GP holds one length-scale vector, the maximum of its posterior. Where the data
say little about a dimension, other length-scales explain them almost as well, and an
acquisition averaged over them (the integrated acquisition of Snoek et al. 2012, over
draws here rather than MCMC samples) keeps some weight on regions that the fitted one
writes off. The draws come from a Gaussian in the log length-scales centred at the fit,
its precision the Hessian of the negative log posterior there: the fit's own loss
(:func:`~gpautotune.surrogate._mll.exact_mll_closure`, per observation, priors included)
times the rows, by central differences of its gradient. Directions flatter than
:data:`LEAST_PRECISION` (the default ``dim_scaled`` prior's own precision) get that
precision, so that a flat or numerically indefinite Hessian still gives draws of a
bounded spread.

BoTorch's fully Bayesian GPs sample every hyperparameter by NUTS, which takes seconds per
fit; one Hessian of ``d`` length-scales costs ``2d`` gradient evaluations of the fit's
loss, a few milliseconds at a hundred observations.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from botorch.models import SingleTaskGP

from gpautotune.surrogate._gp import SurrogateError
from gpautotune.surrogate._mll import exact_mll_closure

__all__ = ["LEAST_PRECISION", "lengthscale_draws", "lengthscales", "log_lengthscale_hessian"]

#: The least precision of a log length-scale in the draws: the ``dim_scaled`` prior's,
#: LogNormal(·, √3).
LEAST_PRECISION = 1 / 3
#: Central-difference step in log length-scale.
STEP = 1e-4


def _base(model: SingleTaskGP) -> torch.nn.Module:
    """The model's kernel with length-scales, refused where its raw parameter is not the
    length-scale itself (a bounded length-scale's transform)."""
    base = model.covar_module.base_kernel
    if base.raw_lengthscale_constraint.enforced:
        raise SurrogateError("length-scale draws need untransformed length-scales")
    return base


@contextmanager
def lengthscales(model: SingleTaskGP, values: np.ndarray) -> Iterator[SingleTaskGP]:
    """``model`` with its length-scales set to ``values`` inside the block, restored after."""
    raw = _base(model).raw_lengthscale
    kept = raw.detach().clone()
    with torch.no_grad():
        raw.copy_(torch.as_tensor(values, dtype=raw.dtype).reshape(raw.shape))
    try:
        yield model
    finally:
        with torch.no_grad():
            raw.copy_(kept)


def log_lengthscale_hessian(model: SingleTaskGP) -> np.ndarray:
    """The Hessian of the negative log posterior in the log length-scales at the model's
    own, by central differences of the fit's loss gradient; the model is left as it was."""
    base = _base(model)
    closure = exact_mll_closure(model, {"raw_lengthscale": base.raw_lengthscale})
    if closure is None:
        raise SurrogateError("length-scale draws need the surrogate's own GP")
    theta = torch.log(base.lengthscale.detach().flatten())
    rows = len(model.train_targets)

    def gradient(at: torch.Tensor) -> torch.Tensor:
        with lengthscales(model, torch.exp(at).numpy()):
            _, (grad,) = closure()
            return rows * grad.detach().flatten() * torch.exp(at)  # chain rule to log scale

    steps = torch.eye(len(theta), dtype=theta.dtype) * STEP
    hessian = torch.stack([(gradient(theta + e) - gradient(theta - e)) / (2 * STEP) for e in steps])
    hessian = hessian.numpy()
    return 0.5 * (hessian + hessian.T)


def lengthscale_draws(model: SingleTaskGP, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` length-scale vectors (``n x d``) drawn from the Laplace approximation of their
    posterior at ``model``'s fit, each at least the length-scales' lower bound."""
    base = _base(model)
    theta = torch.log(base.lengthscale.detach().flatten()).numpy()
    precision, vectors = np.linalg.eigh(log_lengthscale_hessian(model))
    spread = vectors / np.sqrt(np.maximum(precision, LEAST_PRECISION))
    drawn = np.exp(theta + rng.standard_normal((n, len(theta))) @ spread.T)
    return np.maximum(drawn, float(base.raw_lengthscale_constraint.lower_bound))
