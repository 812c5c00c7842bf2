"""What one evaluation of the fit's loss and gradient costs, three ways.

Run: PYTHONPATH=$PWD python benchmarks/mll_cost.py [--n 120] [--dims 10] [--repeat 300]

For the default GP (Matérn 5/2, ARD, learned noise, a linear trend over one feature) on
random data of ``--n`` rows: BoTorch's closure over GPyTorch's
``ExactMarginalLogLikelihood``; the surrogate's own closure (``surrogate/_mll.py``, the same
floats); and the closed-form gradient of the ``gradient: closed_form`` option
(``surrogate/_mll.py``'s ``closed_form_closure``: the kernel's derivatives by hand,
autograd only on the priors). It changes the floats (its gradients agree to about 1e-14
relative), so a fit with it takes other L-BFGS steps; the table prints the largest
relative difference from BoTorch's.
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
from gpautotune.surrogate._mll import closed_form_closure, exact_mll_closure

ROOT5 = math.sqrt(5)
_LOG2PI = math.log(2 * math.pi)


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
        "closed-form gradient": closed_form_closure(model, parameters),
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
