"""Universal kriging fitted as DiceKriging's ``km`` fits it (the seeds' R pipeline).

Seed 003's Laplacian GPR (``phrb/dopt_anova_experiments``, ``src/gpr.r``) called
``km(formula = <trend>, design, response, nugget = 1e-12 * var(y), control =
list(pop.size = 400))``. This module is that model, so that the ``gpr`` strategy can run
as the seeds ran it (``model="kriging"``):

* ``y(x) = f(x)ᵀβ + Z(x) + ε``: a trend ``f`` (intercept and trend features), a
  zero-mean process ``Z`` of covariance ``σ² ∏_i k(|x_i - x'_i| / θ_i)`` — ``k`` the 1-D
  Matérn 5/2, a *tensor product* as DiceKriging's ``covTensorProduct`` (not the Matérn of
  the scaled Euclidean distance) — and a known nugget ``τ² = nugget · var(y)``;
* β by generalised least squares; θ and σ² by maximum likelihood (no priors), inside
  DiceKriging's bounds: ``θ_i ∈ [1e-10, 2 · range_i]`` (the design's range of input
  ``i``), ``σ² ∈ [v_lo / 10, 10 · v_hi]`` from the residual variance of an OLS trend fit
  and a variogram estimate (``kmNuggets.init``); the search starts from the best of
  ``starts`` uniform draws (``pop.size``) and runs L-BFGS-B;
* predictions are DiceKriging's ``type = "UK"``: the variance includes the error of the
  estimated trend, ``σ²_UK(x) = σ² + τ² - cᵀC⁻¹c + uᵀ(FᵀC⁻¹F)⁻¹u`` with
  ``u = f(x) - FᵀC⁻¹c``.

Unlike R (which optimises σ² in the response's own units, ~1e-20 for run times in
seconds), the response is standardised first; the optimum is the same.

DiceKriging is an R package; neither BoTorch nor GPyTorch has universal kriging with the
GLS trend's prediction variance, hence this module. :class:`KrigingModel` makes a fit a
BoTorch ``Model``, so BoTorch's acquisition functions score it like any GP.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from botorch.models.model import Model
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultivariateNormal
from scipy.optimize import minimize

from gpautotune.surrogate._gp import FitReport, Hyperparameters, SurrogateError
from gpautotune.surrogate._linear import estimable_columns

__all__ = ["KrigingModel", "KrigingSettings", "KrigingSurrogate"]

_SQRT5 = math.sqrt(5.0)


@dataclass(frozen=True)
class KrigingSettings:
    """How the kriging model is fitted (DiceKriging's ``km`` arguments).

    Attributes:
        nugget: the known nugget: a fraction of the response's variance, or (with
            ``nugget_units="objective"``) a variance in the response's own units.
        nugget_units: ``variance`` (``nugget · var(y)``, as the seeds' last script
            wrote it: ``1e-12``) or ``objective`` (``nugget`` itself, as ``km(nugget =
            1e-3)`` took it in the script whose runs are the thesis' GPR row; on run times
            of ~1e-10 s that nugget is ~1e14 times their variance).
        starts: uniform draws of (θ, σ²) whose best starts L-BFGS-B (``pop.size``).
        max_iter: L-BFGS-B iterations (R's ``optim`` default, 100).
        log_transform: model log(y) (only when every y > 0); the seeds modelled y.
    """

    nugget: float = 1e-12
    nugget_units: Literal["variance", "objective"] = "variance"
    starts: int = 400
    max_iter: int = 100
    log_transform: bool = False


def tensor_matern52(a: torch.Tensor, b: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Correlations ``∏_i k(|a_i - b_i| / θ_i)`` of the rows of ``a`` (``... x n x p``) and
    ``b`` (``... x m x p``) for ranges ``θ`` (``... x p``): ``... x n x m``."""
    out = torch.ones(())
    for i in range(a.shape[-1]):  # one input at a time: n x m temporaries, not n x m x p
        s = _SQRT5 * (a[..., :, i : i + 1] - b[..., None, :, i]).abs() / theta[..., i, None, None]
        out = out * ((1 + s + s * s / 3) * torch.exp(-s))
    return out


@dataclass(frozen=True)
class _Fit:
    """A fitted model: data, hyperparameters and the factors predictions need."""

    X: torch.Tensor  # n x p, scaled inputs
    F: torch.Tensor  # n x m, trend matrix (intercept first)
    theta: torch.Tensor  # p
    sigma2: float
    tau2: float
    L: torch.Tensor  # Cholesky factor of C = σ² R + τ² I
    Ft: torch.Tensor  # L⁻¹ F
    Rq: torch.Tensor  # R factor of the QR decomposition of Ft
    beta: torch.Tensor  # m
    alpha: torch.Tensor  # C⁻¹ (y - F β)

    @classmethod
    def build(cls, X, F, y, theta, sigma2, tau2) -> _Fit:  # noqa: ANN001 - tensors
        n = len(y)
        C = sigma2 * tensor_matern52(X, X, theta) + tau2 * torch.eye(n, dtype=X.dtype)
        L = torch.linalg.cholesky(C)
        Ft = torch.linalg.solve_triangular(L, F, upper=False)
        yt = torch.linalg.solve_triangular(L, y.unsqueeze(-1), upper=False)
        Q, Rq = torch.linalg.qr(Ft)
        beta = torch.linalg.solve_triangular(Rq, Q.T @ yt, upper=True)
        resid = yt - Ft @ beta
        alpha = torch.linalg.solve_triangular(L.T, resid, upper=True).squeeze(-1)
        return cls(X, F, theta, float(sigma2), tau2, L, Ft, Rq, beta.squeeze(-1), alpha)

    def posterior(self, X: torch.Tensor, F: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """UK mean (``... x q``) and covariance (``... x q x q``) at ``X`` (``... x q x p``)
        with trend rows ``F`` (``... x q x m``); one triangular solve for every point."""
        shape = X.shape[:-1]
        rows, trend = X.reshape(-1, X.shape[-1]), F.reshape(-1, F.shape[-1])
        c = self.sigma2 * tensor_matern52(rows, self.X, self.theta)  # N x n
        mean = trend @ self.beta + c @ self.alpha
        w = torch.linalg.solve_triangular(self.L, c.T, upper=False)  # n x N
        u = trend.T - self.Ft.T @ w  # m x N
        v = torch.linalg.solve_triangular(self.Rq.T, u, upper=False)  # m x N
        w, v = w.T.reshape(*shape, -1), v.T.reshape(*shape, -1)  # ... x q x (n | m)
        prior = self.sigma2 * tensor_matern52(X, X, self.theta)
        eye = torch.eye(X.shape[-2], dtype=X.dtype)
        cov = prior + self.tau2 * eye - w @ w.transpose(-1, -2) + v @ v.transpose(-1, -2)
        return mean.reshape(shape), cov


def _neg_log_lik(X, F, y, theta, sigma2, tau2) -> torch.Tensor:  # noqa: ANN001 - tensors
    """``-log L`` (up to a constant) for a batch of (θ, σ²): ``inf`` where C is not
    positive definite. Shapes: θ ``s x p``, σ² ``s``; returns ``s``."""
    n = len(y)
    R = tensor_matern52(X, X, theta)
    C = sigma2[:, None, None] * R + tau2 * torch.eye(n, dtype=X.dtype)
    L, info = torch.linalg.cholesky_ex(C)
    ok = info == 0
    L = torch.where(ok[:, None, None], L, torch.eye(n, dtype=X.dtype))
    Ft = torch.linalg.solve_triangular(L, F.expand(len(theta), -1, -1), upper=False)
    yt = torch.linalg.solve_triangular(L, y.expand(len(theta), -1).unsqueeze(-1), upper=False)
    Q, Rq = torch.linalg.qr(Ft)
    beta = torch.linalg.solve_triangular(Rq, Q.transpose(-1, -2) @ yt, upper=True)
    resid = (yt - Ft @ beta).squeeze(-1)
    value = torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1) + 0.5 * (resid**2).sum(-1)
    return torch.where(ok & torch.isfinite(value), value, torch.full_like(value, math.inf))


def _variance_bounds(X: np.ndarray, F: np.ndarray, y: np.ndarray, tau2: float) -> tuple:
    """DiceKriging's ``kmNuggets.init``: a starting σ² and its bounds, from the residuals
    of an OLS trend fit (their variance, and half their mean squared difference between
    design points farther apart than the median distance)."""
    resid = y - F @ np.linalg.lstsq(F, y, rcond=None)[0]
    total = float(np.var(resid, ddof=1))
    pairs = np.triu_indices(len(y), 1)
    dist = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))[pairs]
    diff = (resid[:, None] - resid[None, :])[pairs]
    far = dist > np.quantile(dist, 0.5)
    vario = 0.5 * float(np.mean(diff[far] ** 2)) if far.any() else total
    standard = total - tau2 if total - tau2 > 1e-20 else total / 2
    vario_est = vario - tau2 if vario - tau2 > 1e-20 else vario / 2
    low = min(max(total - tau2, 1e-20), max(vario - tau2, 1e-20)) / 10
    high = 10 * max(
        total - tau2 if total - tau2 > 1e-20 else total,
        vario - tau2 if vario - tau2 > 1e-20 else vario,
    )
    return (standard + vario_est) / 2, low, max(high, 10 * low)


class KrigingModel(Model):
    """A kriging fit as a BoTorch model (one output), so that BoTorch's acquisition
    functions score it. Inputs are ``... x q x (p + k)``: the kernel's ``p`` inputs then
    the ``k`` trend features; ``scale`` divides the former, ``kept`` selects the trend
    columns (intercept first) the fit estimated."""

    def __init__(self, fit: _Fit, scale: torch.Tensor, kept: list[int], y: torch.Tensor) -> None:
        super().__init__()
        self.fit, self.scale, self.kept, self.y = fit, scale, kept, y

    @property
    def num_outputs(self) -> int:
        return 1

    @property
    def batch_shape(self) -> torch.Size:
        return torch.Size([])

    def split(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Scaled kernel inputs and the trend matrix (intercept first) of ``X``."""
        p = len(self.scale)
        trend = torch.cat([torch.ones_like(X[..., :1]), X[..., p:]], dim=-1)
        return X[..., :p] / self.scale, trend[..., self.kept]

    def posterior(
        self,
        X: torch.Tensor,
        output_indices: list[int] | None = None,
        observation_noise: bool | torch.Tensor = False,
        posterior_transform=None,  # noqa: ANN001 - BoTorch's signature
    ) -> GPyTorchPosterior:
        """The UK posterior at ``X`` (``... x q x (p + k)``)."""
        mean, cov = self.fit.posterior(*self.split(X.to(torch.float64)))
        cov = 0.5 * (cov + cov.transpose(-1, -2))
        diag = torch.diagonal(cov, dim1=-2, dim2=-1)
        cov = cov + torch.diag_embed((1e-10 - diag).clamp_min(0))  # gpytorch's variance floor
        post = GPyTorchPosterior(MultivariateNormal(mean, cov))
        return posterior_transform(post) if posterior_transform is not None else post

    def condition_on_observations(self, X: torch.Tensor, Y: torch.Tensor, **kwargs) -> Model:  # noqa: ANN003
        """The model with ``(X, Y)`` (model units) added, θ, σ² and τ² unchanged."""
        Xs, F = self.split(X.reshape(-1, X.shape[-1]).to(torch.float64))
        f = self.fit
        y = torch.cat([self.y, Y.reshape(-1).to(torch.float64)])
        fit = _Fit.build(torch.cat([f.X, Xs]), torch.cat([f.F, F]), y, f.theta, f.sigma2, f.tau2)
        return KrigingModel(fit, self.scale, self.kept, y)


class KrigingSurrogate:
    """Fit and query universal kriging; the interface of
    :class:`~gpautotune.surrogate.GPSurrogate` (``fit``, ``restore``, ``transform``,
    ``model``, ``hyperparameters``, ``predict``). ``X`` is ``n x (d + k)``: kernel
    inputs, then trend features."""

    def __init__(self, settings: KrigingSettings, n_dims: int, n_trend: int) -> None:
        self.settings, self.d, self.k = settings, n_dims, n_trend
        self.model: KrigingModel | None = None
        #: The fit's ``theta`` (ranges, in units of the design's spread) and ``sigma2``.
        self.hyperparameters: Hyperparameters | None = None
        self._log, self._shift, self._scale = False, 0.0, 1.0
        #: The nugget in the model's (standardised) units, set with the data.
        self._tau2 = settings.nugget

    def transform(self, y: np.ndarray) -> np.ndarray:
        """Observed values -> model outputs (standardised, monotone in ``y``)."""
        z = np.log(y) if self._log else np.asarray(y, dtype=float)
        return (z - self._shift) / self._scale

    def fit(
        self, X: np.ndarray, y: np.ndarray, *, seed: int = 0, warm: Any = None, fresh: bool = True
    ) -> FitReport:
        """Fit to observations ``y`` (original units) at inputs ``X``. Every fit starts
        afresh from ``starts`` random draws, as ``km`` did: ``warm`` and ``fresh`` (the
        GP's warm start) are accepted and ignored."""
        t0 = time.perf_counter()
        Xs, F, zt, kept, scale = self._data(X, y)
        theta, sigma2, value = self._maximise(Xs, F, zt, X[:, : self.d], seed)
        self.hyperparameters = {"theta": [float(v) for v in theta], "sigma2": [sigma2]}
        fit = self._build(Xs, F, zt, kept, scale)
        return FitReport(
            seconds=time.perf_counter() - t0,
            mll=-value,
            lengthscales=[round(float(v), 5) for v in theta * scale],
            trend=[round(float(v), 5) for v in fit.beta],
            noise=self._tau2,
        )

    def restore(self, X: np.ndarray, y: np.ndarray, hyperparameters: Hyperparameters) -> None:
        """The model of an earlier fit to the same data, from its stored
        :attr:`hyperparameters` (no optimisation)."""
        self.hyperparameters = {k: list(v) for k, v in hyperparameters.items()}
        self._build(*self._data(X, y))

    def _data(self, X: np.ndarray, y: np.ndarray) -> tuple:
        """Scaled kernel inputs, trend matrix, standardised outputs, kept trend columns
        and input scales of the data (sets the output transform)."""
        y = np.asarray(y, dtype=float)
        self._log = self.settings.log_transform and bool(np.all(y > 0))
        z = np.log(y) if self._log else y
        self._shift = float(z.mean())
        self._scale = float(z.std(ddof=1)) if len(z) > 1 and z.std() > 0 else 1.0
        self._tau2 = self.settings.nugget
        if self.settings.nugget_units == "objective":
            self._tau2 /= self._scale**2
        inputs, H = X[:, : self.d], X[:, self.d :]
        kept = [0] + [1 + j for j in estimable_columns(H, max_columns=max(len(y) - 2, 0))]
        F = np.column_stack([np.ones(len(y)), H])[:, kept]
        spread = np.ptp(inputs, axis=0)
        scale = np.where(spread > 0, spread, 1.0)
        return inputs / scale, F, self.transform(y), kept, scale

    def _build(self, Xs, F, zt, kept, scale) -> _Fit:  # noqa: ANN001 - arrays
        """The model of :attr:`hyperparameters` on the data (sets :attr:`model`)."""
        assert self.hyperparameters is not None
        t = torch.as_tensor
        theta = t(self.hyperparameters["theta"], dtype=torch.float64)
        sigma2 = self.hyperparameters["sigma2"][0]
        fit = _Fit.build(t(Xs), t(F), t(zt), theta, sigma2, self._tau2)
        self.model = KrigingModel(fit, t(scale), kept, t(zt))
        return fit

    def _maximise(self, Xs, F, y, raw, seed) -> tuple[np.ndarray, float, float]:  # noqa: ANN001
        """θ (scaled units), σ² and -log L: the best of the uniform starts, then L-BFGS-B."""
        tau2 = self._tau2
        lower, upper, x0, start_value = self._start(Xs, F, y, raw, seed)
        Xt, Ft, yt = (torch.as_tensor(a) for a in (Xs, F, y))

        def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
            p = torch.as_tensor(x, dtype=torch.float64).requires_grad_(True)
            v = _neg_log_lik(Xt, Ft, yt, p[None, :-1], p[None, -1], tau2)[0]
            if not torch.isfinite(v):
                return 1e300, np.zeros_like(x)
            (grad,) = torch.autograd.grad(v, p)
            return float(v.detach()), grad.numpy()

        result = minimize(
            objective,
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=list(zip(lower, upper, strict=True)),
            options={"maxiter": self.settings.max_iter},
        )
        x, value = (result.x, float(result.fun)) if result.fun <= start_value else (x0, start_value)
        return x[:-1], float(x[-1]), value

    def _start(self, Xs, F, y, raw, seed) -> tuple:  # noqa: ANN001
        """Bounds of (θ, σ²) and the best of ``starts`` uniform draws (``kmNuggets.init``)."""
        tau2, starts = self._tau2, self.settings.starts
        start_var, low, high = _variance_bounds(raw, F, y, tau2)
        spread = np.ptp(raw, axis=0)
        lower = np.append(1e-10 / np.where(spread > 0, spread, 1.0), low)
        upper = np.append(np.full(Xs.shape[1], 2.0), high)
        rng = np.random.default_rng(seed)
        draws = np.column_stack(
            [
                rng.uniform(lower[:-1], upper[:-1], size=(starts, Xs.shape[1])),
                rng.uniform(0.5 * start_var, 1.5 * start_var, size=starts),
            ]
        )
        Xt, Ft, yt = (torch.as_tensor(a) for a in (Xs, F, y))
        with torch.no_grad():
            values = torch.cat(
                [
                    _neg_log_lik(
                        Xt, Ft, yt, torch.as_tensor(b[:, :-1]), torch.as_tensor(b[:, -1]), tau2
                    )
                    for b in np.array_split(draws, max(1, starts // 32))
                ]
            )
        if not torch.isfinite(values).any():
            raise SurrogateError("no starting point gives a positive definite kriging matrix")
        best = int(torch.argmin(values))
        return lower, upper, np.clip(draws[best], lower, upper), float(values[best])

    def predict(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation (model units) at ``X``."""
        if self.model is None:
            raise SurrogateError("predict() before fit()")
        with torch.no_grad():
            post = self.model.posterior(torch.as_tensor(X, dtype=torch.float64).unsqueeze(-2))
        return post.mean.reshape(-1).numpy(), post.variance.clamp_min(0).sqrt().reshape(-1).numpy()
