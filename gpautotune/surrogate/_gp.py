"""The GP surrogate: exact GP on BoTorch/GPyTorch with a trend mean and robust fitting.

Outputs are modelled as ``z = (log y - mean) / sd`` by default (times span orders of
magnitude); inputs are the encoded parameters in ``[0, 1]^d`` followed by standardised
trend features. Hyperparameters are fitted by maximum likelihood (L-BFGS via
``botorch.fit_gpytorch_mll``) from a given warm start (the previous step's values) and
from fresh starts; the best marginal likelihood wins. A fit that fails (Cholesky, NaN) is
retried with more jitter and, at worst, the warm start is reused without optimisation.

The surrogate keeps no memory between fits: the warm start is an argument, and the
fitted :attr:`GPSurrogate.hyperparameters` are plain floats (exact in JSON), so a caller
that stores them can rebuild the very same model later (:meth:`GPSurrogate.restore`).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from botorch.models import SingleTaskGP
from botorch.models.transforms.input import Warp
from botorch.optim.fit import fit_gpytorch_mll_scipy
from botorch.optim.utils import get_parameters_and_bounds, sample_all_priors
from gpytorch.constraints import GreaterThan, Interval
from gpytorch.kernels import MaternKernel, RBFKernel, ScaleKernel
from gpytorch.likelihoods import FixedNoiseGaussianLikelihood, GaussianLikelihood
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import GammaPrior, LogNormalPrior

from gpautotune.exceptions import GPAutotuneError
from gpautotune.surrogate._gp_settings import LENGTHSCALE_MIN, MATERN_NU, GPSettings
from gpautotune.surrogate._mll import closed_form_closure, exact_mll_closure
from gpautotune.surrogate._trend import TrendMean

__all__ = [
    "GPSurrogate",
    "FitReport",
    "Hyperparameters",
    "SurrogateError",
    "torch_threads",
]

_log = logging.getLogger(__name__)
#: A model's learned parameters by name (raw values, flattened): JSON-safe and exact.
Hyperparameters = dict[str, list[float]]


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run torch on ``n`` threads, restoring the previous setting afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


class SurrogateError(GPAutotuneError, RuntimeError):
    """The GP could not be fitted at all (the strategy falls back to space filling)."""


def _check_data(X: np.ndarray, y: np.ndarray) -> None:
    """Refuse data no fit can use, naming what is wrong (every start used to fail, and the
    error named only the missing fallback).

    Raises:
        SurrogateError: X is not ``n`` finite rows, or y not ``n`` finite values.
    """
    X, y = np.asarray(X), np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or len(X) != len(y) or not len(y):
        raise SurrogateError(
            f"fit(X, y): X has n rows and y n values (n >= 1); got X {X.shape}, y {y.shape}"
        )
    for name, values in (("X", X), ("y", y)):
        bad = int((~np.isfinite(values.astype(float))).sum())
        if bad:
            raise SurrogateError(
                f"fit(X, y): {name} has {bad} NaN or infinite values; fit the finite "
                "observations (a failed measurement has no value to fit)"
            )


@dataclass
class FitReport:
    """Diagnostics of one fit."""

    seconds: float
    mll: float
    fallback: str | None = None
    lengthscales: list[float] = field(default_factory=list)
    trend: list[float] = field(default_factory=list)
    noise: float | None = None


class GPSurrogate:
    """Fit and query the GP. ``X`` is ``n x (d + k)`` (parameters then trend features)."""

    def __init__(self, settings: GPSettings, n_dims: int, n_trend: int) -> None:
        self.settings, self.d, self.k = settings, n_dims, n_trend
        self.model: SingleTaskGP | None = None
        #: The fitted model's parameters (None before the first fit).
        self.hyperparameters: Hyperparameters | None = None
        self._y_shift = 0.0
        self._y_scale = 1.0
        self._log = False
        self._ranks: tuple[np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------ transforms
    def transform(self, y: np.ndarray) -> np.ndarray:
        """Observed values -> standardised model outputs (monotone in ``y``)."""
        z = np.log(y) if self._log else np.asarray(y, dtype=float)
        if self._ranks is not None:  # copula: normal scores of the training values' ranks
            z = np.interp(z, self._ranks[0], self._ranks[1])
        return (z - self._y_shift) / self._y_scale

    def _set_transform(self, y: np.ndarray) -> None:
        self._log = self.settings.log_transform and bool(np.all(y > 0))
        z = np.log(y) if self._log else np.asarray(y, dtype=float)
        self._ranks = None
        if self.settings.output_warp == "copula" and len(z) > 2:
            from scipy.stats import norm, rankdata

            scores = norm.ppf((rankdata(z) - 0.5) / len(z))
            order = np.argsort(z)
            self._ranks = (z[order], scores[order])
            z = scores
        self._y_shift = float(z.mean())
        self._y_scale = float(z.std()) if len(z) > 1 and z.std() > 0 else 1.0

    # ----------------------------------------------------------------- build
    def _build(self, X: torch.Tensor, Y: torch.Tensor) -> SingleTaskGP:
        s, d = self.settings, self.d
        if s.lengthscale_prior == "gamma":
            prior = GammaPrior(3.0, 6.0)
        elif s.lengthscale_prior == "unit":
            prior = LogNormalPrior(loc=0.0, scale=1.0)
        else:
            prior = LogNormalPrior(loc=math.sqrt(2) + 0.5 * math.log(d), scale=math.sqrt(3))
        if s.lengthscale_max is None:
            constraint = GreaterThan(2.5e-2, transform=None, initial_value=prior.mode)
        else:
            start = min(float(prior.mode), 0.5 * s.lengthscale_max)
            constraint = Interval(LENGTHSCALE_MIN, s.lengthscale_max, initial_value=start)
        common = dict(
            ard_num_dims=d,
            active_dims=tuple(range(d)),
            lengthscale_prior=prior,
            lengthscale_constraint=constraint,
        )
        base = (
            RBFKernel(**common)
            if s.kernel == "rbf"
            else MaternKernel(nu=MATERN_NU[s.kernel], **common)
        )
        covar = ScaleKernel(base, outputscale_prior=GammaPrior(2.0, 0.15))
        if s.noise == "learned":
            likelihood = GaussianLikelihood(
                noise_prior=LogNormalPrior(loc=-4.0, scale=1.0),
                noise_constraint=GreaterThan(s.noise_floor, transform=None, initial_value=1e-3),
            )
        else:
            likelihood = FixedNoiseGaussianLikelihood(
                noise=torch.full((len(Y),), float(s.noise), dtype=X.dtype)
            )
        mean = TrendMean(d, self.k, s.trend_prior_scale)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return SingleTaskGP(
                X,
                Y,
                likelihood=likelihood,
                covar_module=covar,
                mean_module=mean,
                outcome_transform=None,
                input_transform=self._warp(X.shape[-1]) if s.input_warp != "none" else None,
            )

    def _warp(self, width: int) -> Warp:
        """A learned Kumaraswamy warp of the kernel's ``d`` inputs (already in [0, 1])
        among ``width`` columns; the trend features pass unchanged."""
        scale = math.sqrt(0.75)
        return Warp(
            d=width,
            indices=list(range(self.d)),
            bounds=torch.tensor([[0.0] * width, [1.0] * width], dtype=torch.float64),
            concentration0_prior=LogNormalPrior(0.0, scale),
            concentration1_prior=LogNormalPrior(0.0, scale),
        )

    # ------------------------------------------------------------------- fit
    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        *,
        seed: int = 0,
        warm: Hyperparameters | None = None,
        fresh: bool = True,
    ) -> FitReport:
        """Fit to observations ``y`` (original units) at inputs ``X``.

        Args:
            X: inputs, ``n x (d + k)``.
            y: observed values, ``n``.
            seed: seeds the prior draws of the fresh starts.
            warm: hyperparameters to start from (the previous step's); they are also the
                last resort when every start fails.
            fresh: also start from the defaults and ``restarts`` prior draws (always
                when there is no ``warm`` start).
        """
        _check_data(X, y)
        with torch_threads(self.settings.threads):
            return self._fit(X, y, seed, warm, fresh or warm is None)

    def _fit(
        self, X: np.ndarray, y: np.ndarray, seed: int, warm: Hyperparameters | None, fresh: bool
    ) -> FitReport:
        t0 = time.perf_counter()
        Xt, Yt = self._tensors(X, y)
        starts: list[Hyperparameters | None | str] = [] if warm is None else [warm]
        if fresh:
            starts += [None] + ["prior"] * self.settings.restarts
        best, best_mll, fallback, error = None, -math.inf, None, None
        torch.manual_seed(seed)
        for start in starts:
            try:
                model, value = self._fit_from(Xt, Yt, start)
            except Exception as exc:  # noqa: BLE001 - numerical failures of any kind
                _log.debug(
                    "GP fit from %s failed: %s",
                    "previous" if isinstance(start, dict) else start,
                    exc,
                )
                error = exc
                continue
            if value > best_mll:
                best, best_mll = model, value
        if best is None:
            _log.warning(
                "every GP fit start failed (last: %s: %s); retrying with more jitter",
                type(error).__name__,
                error,
            )
            best, fallback = self._rescue(Xt, Yt, warm)
        # The model kept is the one rebuilt from the exported parameters, as
        # restore() rebuilds it: a caller that stored them gets the same predictions.
        self.hyperparameters = _export(best)
        self.model = self._restored(Xt, Yt, self.hyperparameters)
        return self._report(time.perf_counter() - t0, best_mll, fallback)

    def restore(self, X: np.ndarray, y: np.ndarray, hyperparameters: Hyperparameters) -> None:
        """The model of an earlier fit to the same data, from its stored
        :attr:`hyperparameters` (no optimisation): the same predictions as then."""
        with torch_threads(self.settings.threads):
            Xt, Yt = self._tensors(X, y)
            self.hyperparameters = {k: list(v) for k, v in hyperparameters.items()}
            self.model = self._restored(Xt, Yt, self.hyperparameters)

    def _tensors(self, X: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and standardised outputs as tensors (sets the output transform)."""
        self._set_transform(y)
        Xt = torch.as_tensor(X, dtype=torch.float64)
        Yt = torch.as_tensor(self.transform(y), dtype=torch.float64).unsqueeze(-1)
        return Xt, Yt

    def _restored(
        self, X: torch.Tensor, Y: torch.Tensor, hyperparameters: Hyperparameters
    ) -> SingleTaskGP:
        model = self._build(X, Y)
        _load(model, hyperparameters)
        model.eval()
        return model

    def _fit_from(self, X: torch.Tensor, Y: torch.Tensor, start: Any) -> tuple[SingleTaskGP, float]:
        model = self._build(X, Y)
        if isinstance(start, dict):
            _load(model, start)
        elif start == "prior":
            sample_all_priors(model)
            if self.settings.lengthscale_max is not None:  # draws may leave the bounds
                base = model.covar_module.base_kernel
                draw = base.lengthscale_prior.sample(base.lengthscale.shape)
                base.lengthscale = draw.clamp(3e-2, 0.99 * self.settings.lengthscale_max)
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            maxiter = (
                self.settings.max_iter_warm if isinstance(start, dict) else self.settings.max_iter
            )
            # BoTorch's own choice of parameters (names key the bounds), passed to both
            parameters = {
                n: p for n, p in get_parameters_and_bounds(mll)[0].items() if p.requires_grad
            }
            fit_gpytorch_mll_scipy(
                mll,
                parameters=parameters,
                closure=self._closure(model, parameters),  # None: BoTorch's own
                options={"maxiter": maxiter},
            )
        model.train()
        with torch.no_grad():
            value = float(mll(model(*model.train_inputs), model.train_targets))
        model.eval()
        if not math.isfinite(value):
            raise SurrogateError("non-finite marginal likelihood")
        return model, value

    def _closure(self, model: SingleTaskGP, parameters: dict[str, torch.Tensor]) -> Any:
        """The fit's loss closure: the closed-form gradient where the setting asks for it
        and the model is one it covers, else the exact one (None: BoTorch's own)."""
        if self.settings.gradient == "closed_form":
            closure = closed_form_closure(model, parameters)
            if closure is not None:
                return closure
        return exact_mll_closure(model, parameters)

    def _rescue(
        self, X: torch.Tensor, Y: torch.Tensor, warm: Hyperparameters | None
    ) -> tuple[SingleTaskGP, str]:
        """More jitter, then the warm start's hyperparameters without optimisation."""
        import gpytorch

        try:
            with gpytorch.settings.cholesky_jitter(float_value=1e-4, double_value=1e-4):
                model, _ = self._fit_from(X, Y, None)
            return model, "jitter"
        except Exception as exc:  # noqa: BLE001
            _log.warning("GP fit failed even with jitter (%s)", exc)
        if warm is not None:
            return self._restored(X, Y, warm), "previous"
        raise SurrogateError(
            "the GP could not be fitted and there is no previous model to fall back to"
        )

    def _report(self, seconds: float, mll: float, fallback: str | None) -> FitReport:
        m = self.model
        base = m.covar_module.base_kernel
        noise = m.likelihood.noise.detach().flatten()
        return FitReport(
            seconds=seconds,
            mll=mll,
            fallback=fallback,
            lengthscales=[round(float(v), 5) for v in base.lengthscale.detach().flatten()],
            trend=[
                round(float(v), 5)
                for v in torch.cat([m.mean_module.constant, m.mean_module.weights]).detach()
            ],
            noise=float(noise.mean()) if noise.numel() else None,
        )

    # ------------------------------------------------------------- predict
    def predict(self, X: np.ndarray, chunk: int = 8192) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and standard deviation (standardised units) at ``X``."""
        if self.model is None:
            raise SurrogateError("predict() before fit()")
        width = self.model.train_inputs[0].shape[-1]
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != width or not np.isfinite(X).all():
            raise SurrogateError(
                f"predict(X): X must be finite rows of {width} columns, as fitted; got shape "
                f"{X.shape}{'' if np.isfinite(X).all() else ' with NaN or infinite values'}"
            )
        means, sds = [], []
        with torch.no_grad(), torch_threads(self.settings.threads):
            for start in range(0, len(X), chunk):
                post = self.model.posterior(
                    torch.as_tensor(X[start : start + chunk], dtype=torch.float64)
                )
                means.append(post.mean.squeeze(-1).numpy())
                sds.append(post.variance.clamp_min(1e-12).sqrt().squeeze(-1).numpy())
        return np.concatenate(means), np.concatenate(sds)

    def loo_means(self) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out predictive means of the training points and their targets
        (standardised units), in closed form from the fitted model, its hyperparameters
        (trend coefficients included) held: ``mu_i = y_i - [K^-1 (y - m)]_i / [K^-1]_ii``
        with ``K`` the noisy training covariance (Rasmussen & Williams 2006, eq. 5.12).
        BoTorch's cross-validation refits per fold; this needs one Cholesky factor."""
        if self.model is None:
            raise SurrogateError("loo_means() before fit()")
        model = self.model
        model.train()
        try:
            with torch.no_grad(), torch_threads(self.settings.threads):
                (X,), y = model.train_inputs, model.train_targets
                prior = model.likelihood(model(X), X)
                inverse = torch.cholesky_inverse(torch.linalg.cholesky(prior.covariance_matrix))
                diag = torch.diagonal(inverse)
                mu = y - (inverse @ (y - prior.mean)) / diag
        finally:
            model.eval()
        return mu.numpy(), y.numpy()

    def loo_rank(self) -> float:
        """How well the leave-one-out means rank the training targets: their Spearman
        correlation, the rows at the largest target (where a caller imputes failed
        configurations) left out; -1 where fewer than three rows remain or a ranking
        is flat."""
        from scipy.stats import spearmanr

        mu, z = self.loo_means()
        keep = z < z.max()
        if keep.sum() < 3:
            return -1.0
        rho = spearmanr(mu[keep], z[keep]).statistic
        return float(rho) if np.isfinite(rho) else -1.0


def _export(model: SingleTaskGP) -> Hyperparameters:
    """The learned parameters of a model, by name, as Python floats (exact in JSON)."""
    return {
        name: [float(v) for v in p.detach().flatten().tolist()]
        for name, p in model.named_parameters()
    }


def _load(model: SingleTaskGP, hyperparameters: Hyperparameters) -> None:
    """Set a model's parameters from :func:`_export`'s values (names it lacks ignored)."""
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, values in hyperparameters.items():
            if name in params:
                target = params[name]
                target.copy_(torch.as_tensor(values, dtype=target.dtype).reshape(target.shape))
