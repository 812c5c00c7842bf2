"""What one evaluation of the fit's loss and gradient costs, three ways.

Run: PYTHONPATH=$PWD python benchmarks/mll_cost.py [--n 120] [--dims 10] [--repeat 300]

For the default GP (Matérn 5/2, ARD, learned noise, a linear trend over one feature) on
random data of ``--n`` rows: BoTorch's closure over GPyTorch's
``ExactMarginalLogLikelihood``; the surrogate's own closure (``surrogate/_mll.py``, the same
floats); and a closed-form gradient, written here only to measure what it would save:
the kernel's derivatives by hand (``dK/dℓ = σ² 5/3 (1 + √5 r) e^{-√5 r} Δ²/ℓ³``, summed
against ``G = (ααᵀ - K⁻¹)/2`` with two matrix products), autograd only on the priors. It
changes the floats (its gradients agree to about 1e-14 relative), so a fit with it takes
other L-BFGS steps; the table prints the largest relative difference from BoTorch's.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
from botorch.optim.closures import get_loss_closure_with_grads
from botorch.optim.utils import get_parameters_and_bounds
from gpytorch.mlls import ExactMarginalLogLikelihood

from gpautotune.surrogate import GPSettings, GPSurrogate
from gpautotune.surrogate._mll import exact_mll_closure

ROOT5 = math.sqrt(5)
_LOG2PI = math.log(2 * math.pi)


def closed_form(model, parameters, n_dims: int):
    """Loss and gradients of the default GP by hand (a measuring aid, not the product's)."""
    X, y = model.train_inputs[0], model.train_targets
    n = len(y)
    base, likelihood = model.covar_module.base_kernel, model.likelihood
    priors = [(prior, closure, module) for _, module, prior, closure, _ in model.named_priors()]
    features = X[:, n_dims:]
    x = X[:, :n_dims] - X[:, :n_dims].mean(0)

    def closure():
        ls = base.lengthscale.detach().view(-1)
        scale = model.covar_module.outputscale.detach()
        xs = x / ls
        sq = (xs * xs).sum(1)
        r2 = (sq[:, None] + sq[None, :] - 2 * xs @ xs.T).clamp_min_(0)
        r = r2.sqrt()
        decay, poly = torch.exp(-ROOT5 * r), 1 + ROOT5 * r
        K = scale * (poly + (5.0 / 3.0) * r2) * decay
        full = K.clone()
        full.diagonal().add_(likelihood.noise.detach().view(-1))
        mean_module = model.mean_module
        mean = mean_module.constant.detach() + features @ mean_module.weights.detach()
        L = torch.linalg.cholesky(full)
        resid = (y - mean).unsqueeze(-1)
        alpha = torch.cholesky_solve(resid, L)
        value = -0.5 * (resid * alpha).sum() - L.diagonal().log().sum() - 0.5 * n * _LOG2PI
        G = 0.5 * (alpha @ alpha.T - torch.cholesky_inverse(L))
        W = G * (scale * 5.0 / 3.0) * poly * decay
        by_dim = 2 * ((x * x).T @ W.sum(1)) - 2 * (x * (W @ x)).sum(0)
        a = alpha.view(-1)
        grads = {
            "likelihood.noise_covar.raw_noise": G.diagonal().sum(),
            "model.mean_module.constant": a.sum(),
            "model.mean_module.weights": features.T @ a,
            # the output scale is a softplus of its raw parameter
            "model.covar_module.raw_outputscale": (G * K).sum()
            / scale
            * torch.sigmoid(model.covar_module.raw_outputscale.detach()),
            "model.covar_module.base_kernel.raw_lengthscale": by_dim / ls**3,
        }
        for p in parameters.values():
            p.grad = None
        prior = sum(p.log_prob(c(m)).sum() for p, c, m in priors)
        (-prior / n).backward()
        out = []
        for name, p in parameters.items():
            prior_grad = torch.zeros_like(p) if p.grad is None else p.grad  # no prior: None
            p.grad = prior_grad - grads[name].view_as(p) / n
            out.append(p.grad)
        return -(value + prior.detach()) / n, out

    return closure


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    torch.set_num_threads(1)  # as the surrogate fits (GPSettings.threads)
    rng = np.random.default_rng(0)
    surrogate = GPSurrogate(GPSettings(), args.dims, 1)
    X = rng.random((args.n, args.dims + 1))
    model = surrogate._build(*surrogate._tensors(X, np.exp(rng.normal(size=args.n))))
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    mll.train()
    parameters = {n: p for n, p in get_parameters_and_bounds(mll)[0].items() if p.requires_grad}
    ways = {
        "BoTorch's closure (GPyTorch)": get_loss_closure_with_grads(mll, parameters=parameters),
        "surrogate/_mll.py": exact_mll_closure(model, parameters),
        "closed-form gradient": closed_form(model, parameters, args.dims),
    }
    _, reference = ways["BoTorch's closure (GPyTorch)"]()
    reference = [g.clone() for g in reference]
    print(
        f"| loss and gradient, {args.n} rows, {args.dims} dimensions | ms per evaluation "
        "| largest relative gradient difference |"
    )
    print("|---|---|---|")
    for name, closure in ways.items():
        _, grads = closure()
        diff = max(
            float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))
            for a, b in zip(grads, reference, strict=True)
        )
        for _ in range(20):
            closure()
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            closure()
        ms = (time.perf_counter() - t0) / args.repeat * 1e3
        print(f"| {name} | {ms:.2f} | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main()
