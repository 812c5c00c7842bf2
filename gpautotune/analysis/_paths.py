"""Functions to analyse: a deterministic function, or sample paths of a GP posterior.

Sensitivity indices are functionals of one function ``f``. A *path sampler* evaluates
``P`` functions at the rows of an index matrix and returns a ``(P, M)`` array; the same
sampler called twice returns values of the same ``P`` functions (each path is a
consistent function, which estimators that evaluate ``f`` on several designs need).

* :class:`FunctionPaths` — one deterministic function (``P = 1``).
* :class:`PosteriorPaths` — ``P`` draws ``f_p ~ GP | data`` by Matheron's rule
  (pathwise conditioning, Wilson et al. 2020, 2021)::

      f_p(x) = m(x) + g_p(x) + k(x, X) (K + Σ)^{-1} (y - m(X) - g_p(X) - ε_p),

  where ``g_p(x) = φ_p(x)ᵀ w_p`` is a random-Fourier-feature draw of the zero-mean prior
  (``rff_features`` features of the fitted kernel, built by BoTorch's
  ``gen_kernel_features``), ``w_p ~ N(0, I)``, ``ε_p ~ N(0, Σ)`` and ``m`` the fitted
  trend mean. Every path gets its **own** random frequencies (a batch of ``P`` kernels),
  so the approximation error of the features is independent between paths: the
  ensemble's mean and covariance equal the exact posterior's, whatever ``rff_features``
  (with frequencies shared by all paths, as ``draw_matheron_paths`` does, the posterior
  variance of a densely sampled region was off by a factor 0.5-1.3 in our checks).
* :class:`PosteriorMean` — the GP's posterior mean (``P = 1``): the fitted model as a
  point estimate, which is what seed 003 analysed.

Values are in the surrogate's standardised output units (log of the objective by
default); Sobol indices are ratios of variances and do not depend on that scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch

from gpautotune.surrogate import GPSurrogate, SurrogateError
from gpautotune.surrogate._gp import torch_threads

__all__ = ["PathSampler", "FunctionPaths", "PosteriorPaths", "PosteriorMean"]

Features = Callable[[np.ndarray], np.ndarray]


class PathSampler(Protocol):
    """``P`` consistent functions of an index matrix: ``sampler(index) -> (P, M)``."""

    n_paths: int
    label: str

    def __call__(self, index: np.ndarray) -> np.ndarray: ...


class FunctionPaths:
    """A deterministic function ``fn(index) -> (M,)`` as a single path."""

    label = "function"

    def __init__(self, fn: Callable[[np.ndarray], np.ndarray]) -> None:
        self.fn, self.n_paths = fn, 1

    def __call__(self, index: np.ndarray) -> np.ndarray:
        return np.asarray(self.fn(index), dtype=float).reshape(1, -1)


def _fitted(gp: GPSurrogate) -> None:
    if gp.model is None:
        raise SurrogateError("the GP must be fitted before its sensitivity can be analysed")


class PosteriorMean:
    """The posterior mean of a fitted :class:`GPSurrogate` at ``features(index)``."""

    label = "posterior mean"

    def __init__(self, gp: GPSurrogate, features: Features) -> None:
        _fitted(gp)
        self.gp, self.features, self.n_paths = gp, features, 1

    def __call__(self, index: np.ndarray) -> np.ndarray:
        return self.gp.predict(self.features(index))[0].reshape(1, -1)


def _batched_kernel(covar: torch.nn.Module, n: int) -> torch.nn.Module:
    """A copy of a ``ScaleKernel(Matern|RBF)`` with batch shape ``[n]`` (same hyperparameters)."""
    from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel

    base = covar.base_kernel
    common = dict(ard_num_dims=base.ard_num_dims, active_dims=base.active_dims, batch_shape=torch.Size([n]))
    copy = MaternKernel(nu=base.nu, **common) if isinstance(base, MaternKernel) else RBFKernel(**common)
    copy = copy.to(torch.float64)
    copy.lengthscale = base.lengthscale.detach().expand(n, 1, -1).clone()
    scaled = ScaleKernel(copy, batch_shape=torch.Size([n])).to(torch.float64)
    scaled.outputscale = covar.outputscale.detach().expand(n).clone()
    return scaled


class PosteriorPaths:
    """``n_paths`` posterior draws of the latent function of a fitted GP (see module doc).

    Args:
        gp: a fitted surrogate (Matérn or RBF kernel in a ``ScaleKernel``).
        features: maps an index matrix to the GP's inputs (``GPRStrategy.features``).
        n_paths: number of posterior functions.
        seed: seeds the frequencies, weights and noise (draws are reproducible).
        rff_features: random Fourier features per path (rounded up to even).
        chunk: rows evaluated at once (memory ~ ``chunk * n_paths * rff_features`` doubles).
    """

    label = "posterior paths"

    def __init__(self, gp: GPSurrogate, features: Features, n_paths: int, *, seed: int = 0,
                 rff_features: int = 256, chunk: int = 2048) -> None:
        from botorch.sampling.pathwise import gen_kernel_features

        _fitted(gp)
        model = gp.model
        self.features, self.n_paths, self.chunk, self.threads = features, int(n_paths), int(chunk), gp.settings.threads
        self.mean = model.mean_module
        self.covar = model.covar_module
        X = model.train_inputs[0]
        y = model.train_targets
        with torch.random.fork_rng(), torch.no_grad(), torch_threads(self.threads):
            torch.manual_seed(seed)
            self.feature_map = gen_kernel_features(_batched_kernel(self.covar, self.n_paths),
                                                   num_inputs=X.shape[-1], num_outputs=2 * ((rff_features + 1) // 2))
            self.weights = torch.randn(self.n_paths, self.feature_map.num_outputs, 1, dtype=torch.float64)
            noise = model.likelihood.noise.detach().reshape(-1).expand(len(y))
            eps = torch.randn(self.n_paths, len(y), dtype=torch.float64) * noise.sqrt()
            K = self.covar(X).to_dense() + torch.diag(noise)
            L = torch.linalg.cholesky(K + 1e-10 * torch.eye(len(y), dtype=K.dtype))
            residual = y - self.mean(X) - self._prior(X) - eps  # (P, n)
            self.update = torch.cholesky_solve(residual.T, L)  # (n, P)
        self.train_X = X

    def _prior(self, X: torch.Tensor) -> torch.Tensor:
        """Zero-mean prior draws ``g_p(X)``, shape ``(P, M)``."""
        return (self.feature_map(X) @ self.weights).squeeze(-1)

    def __call__(self, index: np.ndarray) -> np.ndarray:
        out = np.empty((self.n_paths, len(index)))
        with torch.no_grad(), torch_threads(self.threads):
            for start in range(0, len(index), self.chunk):
                X = torch.as_tensor(self.features(index[start:start + self.chunk]), dtype=torch.float64)
                cross = self.covar(X, self.train_X).to_dense()  # (M, n)
                values = self.mean(X) + self._prior(X) + (cross @ self.update).T
                out[:, start:start + len(X)] = values.numpy()
        return out
