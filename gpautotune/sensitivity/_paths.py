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
  ensemble's mean and covariance equal the exact posterior's (in expectation over the
  frequencies), whatever ``rff_features``. With frequencies shared by all paths, as
  ``draw_matheron_paths`` does, the error is common to the ensemble and biases its
  variance, most where data are dense and the posterior variance is a small remainder.
* :class:`PosteriorMean` — the GP's posterior mean (``P = 1``): the fitted model as a
  point estimate, which is what seed 003 analysed.

Values are in the surrogate's standardised output units (log of the objective by
default); Sobol indices are ratios of variances and do not depend on that scale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

import numpy as np
import torch

from gpautotune.exceptions import ConfigError
from gpautotune.sensitivity._laplace import (
    Hyperparameters,
    fitted_hyperparameters,
    laplace_hyperparameters,
)
from gpautotune.surrogate import GPSurrogate, SurrogateError, TrendMean, torch_threads

__all__ = ["PathSampler", "FunctionPaths", "PosteriorPaths", "PosteriorMean", "checked_values"]

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
        """The values at the rows of ``index``, as one path.

        Raises:
            ConfigError: the function did not return one value per row of ``index``, or
                some are NaN or infinite (a variance of them, and so every index, would
                be NaN, which the estimators turn into 0).
        """
        values = _one_per_row(np.asarray(self.fn(index), dtype=float), len(index))
        bad = ~np.isfinite(values)
        if bad.any():
            raise ConfigError(
                f"the function gave {int(bad.sum())} values that are NaN or infinite of "
                f"{values.size} points; Sobol indices need a finite value at every point "
                "(give failed configurations a value, e.g. a surrogate's prediction)"
            )
        return values


def _one_per_row(values: np.ndarray, rows: int) -> np.ndarray:
    """``values`` as a ``(1, rows)`` path, or a :class:`ConfigError` saying what the function
    returned instead (a scalar, another length, a 2-D array)."""
    column_or_row = values.ndim == 1 or (values.ndim == 2 and 1 in values.shape)
    if values.size == rows and column_or_row:
        return values.reshape(1, -1)
    got = (
        "a scalar"
        if values.ndim == 0
        else f"{values.size:,} values"
        if values.ndim == 1
        else f"an array of shape {values.shape}"
    )
    raise ConfigError(
        f"the function returned {got} for {rows:,} rows of the index matrix; it must return "
        f"one value per row (an array of shape ({rows},))"
    )


def checked_values(sampler: PathSampler, index: np.ndarray) -> np.ndarray:
    """``sampler(index)``, checked to be a ``(sampler.n_paths, len(index))`` array.

    Raises:
        ConfigError: it is not (a user's sampler returned another shape).
    """
    values = np.asarray(sampler(index), dtype=float)
    expected = (sampler.n_paths, len(index))
    if values.shape != expected:
        raise ConfigError(
            f"the path sampler returned an array of shape {values.shape} for {len(index):,} "
            f"rows of the index matrix; it must return one value per path and row, shape "
            f"{expected} (n_paths, rows)"
        )
    return values


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


def _batched_kernel(covar: torch.nn.Module, hyper: Hyperparameters) -> torch.nn.Module:
    """A ``ScaleKernel(Matern|RBF)`` like ``covar`` with one set of hyperparameters per path."""
    from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel

    base, batch = covar.base_kernel, torch.Size([hyper.outputscale.shape[0]])
    common = dict(ard_num_dims=base.ard_num_dims, active_dims=base.active_dims, batch_shape=batch)
    copy = (
        MaternKernel(nu=base.nu, **common)
        if isinstance(base, MaternKernel)
        else RBFKernel(**common)
    )
    copy = copy.to(torch.float64)
    copy.raw_lengthscale_constraint.lower_bound.fill_(
        0.0
    )  # the draws respect the model's own floor
    copy.lengthscale = hyper.lengthscale
    scaled = ScaleKernel(copy, batch_shape=batch).to(torch.float64)
    scaled.outputscale = hyper.outputscale
    return scaled.eval()


class PosteriorPaths:
    """``n_paths`` posterior draws of the latent function of a fitted GP (see module doc).

    With ``bayesian_trend`` (the default), the trend coefficients are not taken at their
    fitted values but drawn from their posterior too: ``β ~ N(0, s² I)`` a priori (the
    ``TrendMean`` prior, ``s = GPSettings.trend_prior_scale``) is the same as adding
    ``s² h(x)ᵀh(x')`` to the kernel and keeping only the constant mean (universal
    kriging with a Gaussian prior on β), so each path draws ``β_p`` with its prior
    function and Matheron's update conditions both on the data. The paths' mean is
    unchanged (the fitted β is this model's posterior mean for the fitted kernel), their
    spread now includes how little the data pin the trend down — the dominant part of a
    trend model's uncertainty when there are few points per dimension.

    With ``hyperparameters="laplace"`` (the default), every path also has its own kernel
    length-scales, output scale and noise, drawn from a Laplace approximation of their
    posterior (:mod:`._laplace`); ``"fitted"`` uses the maximum-likelihood values.

    Args:
        gp: a fitted surrogate (Matérn or RBF kernel in a ``ScaleKernel``).
        features: maps an index matrix to the GP's inputs (``GPRStrategy.features``).
        n_paths: number of posterior functions.
        seed: seeds the hyperparameters, frequencies, weights and noise (reproducible).
        rff_features: random Fourier features per path (rounded up to even).
        bayesian_trend: draw the trend coefficients too (see above).
        hyperparameters: ``laplace`` or ``fitted`` (see above).
        chunk: at most this many rows are evaluated at once (fewer when memory needs it).
    """

    label = "posterior paths"

    def __init__(
        self,
        gp: GPSurrogate,
        features: Features,
        n_paths: int,
        *,
        seed: int = 0,
        rff_features: int = 256,
        bayesian_trend: bool = True,
        hyperparameters: Literal["laplace", "fitted"] = "laplace",
        chunk: int = 2048,
    ) -> None:
        from botorch.sampling.pathwise import gen_kernel_features

        _fitted(gp)
        if hyperparameters not in ("laplace", "fitted"):
            raise ConfigError(
                f"hyperparameters must be 'laplace' or 'fitted', not {hyperparameters!r}"
            )
        model = gp.model
        self.features, self.n_paths, self.threads = features, int(n_paths), gp.settings.threads
        self.mean = model.mean_module
        trend = isinstance(self.mean, TrendMean) and self.mean.weights.numel() > 0
        self.trend_scale = float(gp.settings.trend_prior_scale) if bayesian_trend and trend else 0.0
        self.label = (
            f"GP posterior paths ({'drawn' if self.trend_scale else 'fixed'} trend, "
            f"{hyperparameters} kernel hyperparameters)"
        )
        X, y = model.train_inputs[0], model.train_targets
        n_features = 2 * ((rff_features + 1) // 2)
        self.chunk = max(64, min(int(chunk), (1 << 24) // (self.n_paths * max(n_features, len(y)))))
        with torch.random.fork_rng(), torch.no_grad(), torch_threads(self.threads):
            torch.manual_seed(seed)
            if hyperparameters == "laplace":
                with torch.enable_grad():
                    self.hyper = laplace_hyperparameters(
                        model, self.n_paths, torch.Generator().manual_seed(seed)
                    )
            else:
                self.hyper = fitted_hyperparameters(model, self.n_paths)
            self.covar = _batched_kernel(model.covar_module, self.hyper)
            self.feature_map = gen_kernel_features(
                self.covar, num_inputs=X.shape[-1], num_outputs=n_features
            )
            self.weights = torch.randn(
                self.n_paths, self.feature_map.num_outputs, 1, dtype=torch.float64
            )
            k = self.mean.weights.numel() if trend else 0
            self.beta = torch.randn(self.n_paths, k, dtype=torch.float64) * self.trend_scale
            eps = torch.randn(self.n_paths, len(y), dtype=torch.float64) * self.hyper.noise.sqrt()
            K = self._cross(X, X) + torch.diag_embed(self.hyper.noise)
            L = torch.linalg.cholesky(K + 1e-10 * torch.eye(len(y), dtype=K.dtype))
            residual = y - self._mean(X) - self._prior(X) - eps  # (P, n)
            self.update = torch.cholesky_solve(residual.unsqueeze(-1), L)  # (P, n, 1)
        self.train_X = X

    def _trend(self, X: torch.Tensor) -> torch.Tensor:
        return X[..., self.mean.offset :]

    def _mean(self, X: torch.Tensor) -> torch.Tensor:
        """The fixed part of the prior mean: everything, or only the constant."""
        return self.mean.constant.expand(len(X)) if self.trend_scale else self.mean(X)

    def _cross(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        """Prior covariance per path ``(P, |A|, |B|)``: the kernel, plus ``s² h(a)ᵀh(b)``."""
        K = self.covar(A, B).to_dense()
        return (
            K + self.trend_scale**2 * self._trend(A) @ self._trend(B).T if self.trend_scale else K
        )

    def _prior(self, X: torch.Tensor) -> torch.Tensor:
        """Zero-mean prior draws ``g_p(X) (+ h(X)ᵀβ_p)``, shape ``(P, M)``."""
        values = (self.feature_map(X) @ self.weights).squeeze(-1)
        return values + self.beta @ self._trend(X).T if self.trend_scale else values

    def __call__(self, index: np.ndarray) -> np.ndarray:
        out = np.empty((self.n_paths, len(index)))
        with torch.no_grad(), torch_threads(self.threads):
            for start in range(0, len(index), self.chunk):
                X = torch.as_tensor(
                    self.features(index[start : start + self.chunk]), dtype=torch.float64
                )
                update = (self._cross(X, self.train_X) @ self.update).squeeze(-1)
                out[:, start : start + len(X)] = (self._mean(X) + self._prior(X) + update).numpy()
        return out
