"""Linear models over a :class:`~gpautotune.surrogate.Basis`: OLS or quantile regression,
per-factor significance tests, and an optional Box-Cox transform of the response.

The model is ``g(y) = b_0 + H b + e`` with ``H`` the basis matrix and ``g`` the identity
or the Box-Cox power transform ``g(y) = (y^l - 1) / l`` (``log y`` at ``l = 0``). ``l`` is
the profile-likelihood estimate of seed 003 §11.3 (R's ``car::powerTransform`` of the
fitted model): it minimises the residual sum of squares of the geometric-mean normalised
transform ``z = (y^l - 1) / (l * gm(y)^(l-1))``. With ``transform="auto"`` it is applied
only when a Breusch-Pagan test finds the residuals heteroscedastic.

The significance of a *factor* (a parameter) is the F-test (Wald test for quantile
regression) of the joint null hypothesis that every coefficient of the terms involving it
is zero. ``g`` is increasing, so the configuration minimising the prediction on the
transformed scale also minimises it on the original one.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg

from gpautotune.surrogate._formula import Basis

# statsmodels and scipy.stats/optimize are imported where used: importing
# gpautotune.surrogate (and the CLI) stays fast.

__all__ = ["LinearFit", "Transform", "boxcox_lambda", "estimable_columns", "fit_linear"]

Transform = Literal["none", "boxcox", "auto"]
_RANK_TOL = 1e-9


@dataclass(frozen=True)
class LinearFit:
    """A fitted linear model.

    Attributes:
        basis: the terms the model was asked for.
        kept: positions (in ``basis``) of the terms estimable from the data; the others
            were constant or collinear over the sample and are left out.
        params: intercept, then one coefficient per kept term (standardised features).
        pvalues: per parameter of the basis, the p-value of its joint test (NaN when it
            could not be tested: no estimable term, or no residual degree of freedom).
        boxcox_lambda: the Box-Cox exponent applied to the response, or None.
        quantile: the regression quantile, or None for least squares.
        test: how the p-values were computed: ``"f-test"`` (OLS), ``"wald"`` (quantile
            regression, statsmodels' sparsity-based covariance) or ``"ols-f-test"``
            (quantile regression whose covariance could not be estimated: the OLS
            F-test on the same data ranks the factors instead).
    """

    basis: Basis
    kept: tuple[int, ...]
    params: np.ndarray
    pvalues: dict[str, float]
    boxcox_lambda: float | None
    quantile: float | None
    test: str
    _center: np.ndarray
    _scale: np.ndarray

    def predict(self, H: np.ndarray) -> np.ndarray:
        """Predictions (on the transformed scale) for a ``(n, len(basis))`` basis matrix."""
        X = (H[:, list(self.kept)] - self._center) / self._scale
        return self.params[0] + X @ self.params[1:]

    def significant(self, alpha: float) -> list[str]:
        """Parameters whose p-value is below ``alpha``, most significant first."""
        ranked = sorted(
            (p, name) for name, p in self.pvalues.items() if np.isfinite(p) and p < alpha
        )
        return [name for _, name in ranked]

    def ranked(self) -> list[str]:
        """All parameters, most significant first (untestable ones last, in basis order)."""
        order = {name: i for i, name in enumerate(self.basis.parameters)}
        return sorted(
            self.pvalues,
            key=lambda n: (
                not np.isfinite(self.pvalues[n]),
                self.pvalues[n] if np.isfinite(self.pvalues[n]) else 0.0,
                order[n],
            ),
        )


def fit_linear(
    basis: Basis,
    H: np.ndarray,
    y: np.ndarray,
    *,
    quantile: float | None = None,
    transform: Transform = "none",
    heteroscedasticity_alpha: float = 0.05,
) -> LinearFit:
    """Fit ``y`` on the basis matrix ``H`` (``(n, len(basis))``).

    Args:
        basis: the basis ``H`` was built from (names the terms and their parameters).
        H: basis matrix of the measured configurations.
        y: their measured values.
        quantile: None for ordinary least squares, else the quantile ``tau`` of a
            quantile regression (statsmodels ``QuantReg``).
        transform: ``"none"``, ``"boxcox"`` (always, when every ``y > 0``) or ``"auto"``
            (Box-Cox when a Breusch-Pagan test rejects homoscedasticity at
            ``heteroscedasticity_alpha``).
    """
    import scipy.stats
    import statsmodels.api as sm

    y = np.asarray(y, dtype=float)
    H = np.asarray(H, dtype=float).reshape(len(y), len(basis))
    kept = estimable_columns(H, len(y) - 1)
    center = H[:, kept].mean(axis=0) if kept else np.empty(0)
    scale = H[:, kept].std(axis=0) if kept else np.empty(0)
    X = (
        sm.add_constant((H[:, kept] - center) / scale, has_constant="add")
        if kept
        else np.ones((len(y), 1))
    )
    lam = _choose_lambda(X, y, transform, heteroscedasticity_alpha)
    target = y if lam is None else scipy.stats.boxcox(y, lmbda=lam)
    df_resid = len(y) - X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if quantile is None:
            result = sm.OLS(target, X).fit()
            pvalues, tested = _factor_pvalues(basis, kept, result, df_resid), "f-test"
        else:
            result = sm.QuantReg(target, X).fit(q=quantile, max_iter=5000)
            pvalues, tested = _factor_pvalues(basis, kept, result, df_resid), "wald"
            if not np.isfinite(list(pvalues.values())).any():
                # The sparsity estimate behind QuantReg's standard errors fails for
                # extreme quantiles on small samples; rank factors by the OLS F-test.
                pvalues, tested = (
                    _factor_pvalues(basis, kept, sm.OLS(target, X).fit(), df_resid),
                    "ols-f-test",
                )
    params = np.asarray(result.params, dtype=float)
    return LinearFit(basis, tuple(kept), params, pvalues, lam, quantile, tested, center, scale)


def estimable_columns(H: np.ndarray, max_columns: int | None = None) -> list[int]:
    """Positions of columns of ``H`` that vary and are linearly independent of each other
    and of an intercept (pivoted QR of the standardised columns), at most ``max_columns``."""
    H = np.asarray(H, dtype=float)
    if len(H) < 2 or H.shape[1] == 0 or (max_columns is not None and max_columns < 1):
        return []
    spread = H.std(axis=0)
    varying = [j for j in range(H.shape[1]) if spread[j] > 1e-12 * max(1.0, np.abs(H[:, j]).max())]
    if not varying:
        return []
    Z = (H[:, varying] - H[:, varying].mean(axis=0)) / spread[varying]
    _, R, pivot = scipy.linalg.qr(Z, mode="economic", pivoting=True)
    diag = np.abs(np.diag(R))
    rank = int((diag > _RANK_TOL * diag[0]).sum()) if len(diag) else 0
    if max_columns is not None:
        rank = min(rank, max_columns)
    return sorted(varying[j] for j in pivot[:rank])


def _choose_lambda(
    X: np.ndarray, y: np.ndarray, transform: Transform, alpha: float
) -> float | None:
    import statsmodels.api as sm
    from statsmodels.stats.diagnostic import het_breuschpagan

    if transform == "none" or np.any(y <= 0) or len(y) <= X.shape[1]:
        return None
    if transform == "auto" and X.shape[1] > 1:
        resid = sm.OLS(y, X).fit().resid
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, p_lm, _, _ = het_breuschpagan(resid, X)
        if not p_lm < alpha:
            return None
    return boxcox_lambda(X, y)


def boxcox_lambda(X: np.ndarray, y: np.ndarray, bounds: tuple[float, float] = (-3.0, 3.0)) -> float:
    """Profile-likelihood Box-Cox exponent of the linear model ``y ~ X`` (``y > 0``)."""
    import scipy.optimize

    log_y = np.log(y)
    log_gm = log_y.mean()
    q, _ = np.linalg.qr(X)

    def rss(lam: float) -> float:
        if abs(lam) < 1e-8:
            z = np.exp(log_gm) * log_y
        else:
            z = np.expm1(lam * log_y) / (lam * np.exp((lam - 1) * log_gm))
        r = z - q @ (q.T @ z)
        return float(r @ r)

    return float(scipy.optimize.minimize_scalar(rss, bounds=bounds, method="bounded").x)


def _factor_pvalues(basis: Basis, kept: list[int], result, df_resid: int) -> dict[str, float]:
    out: dict[str, float] = {}
    position = {j: k + 1 for k, j in enumerate(kept)}  # column 0 is the intercept
    for name in basis.parameters:
        cols = [position[j] for j in basis.terms_of(name) if j in position]
        if not cols or df_resid < 1:
            out[name] = float("nan")
            continue
        R = np.zeros((len(cols), len(result.params)))
        R[np.arange(len(cols)), cols] = 1.0
        try:
            p = float(np.asarray(result.f_test(R).pvalue))
        except (ValueError, np.linalg.LinAlgError):
            p = float("nan")
        out[name] = p
    return out
