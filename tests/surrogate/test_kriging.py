"""Universal kriging fitted as DiceKriging's km: the estimates, the UK prediction, BoTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.acquisition import UpperConfidenceBound

from gpautotune.surrogate import KrigingSettings, KrigingSurrogate, SurrogateError
from gpautotune.surrogate._kriging import tensor_matern52

FAST = KrigingSettings(starts=40)


def _data(n: int = 25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two inputs on [0, 10]^2, a linear trend in the first plus a smooth bump."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 10, size=(n, 2))
    y = 3.0 + 2.0 * X[:, 0] + np.sin(X[:, 0]) * np.cos(X[:, 1] / 2)
    return X, y


def _with_trend(X: np.ndarray) -> np.ndarray:
    """Kernel inputs, then one trend feature (the first input)."""
    return np.column_stack([X, X[:, 0]])


def test_tensor_matern_is_the_product_of_one_dimensional_correlations() -> None:
    a, b = torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 2.0]])
    theta = torch.tensor([2.0, 4.0])

    def k(h: float) -> float:  # Matérn 5/2 of a scaled distance
        s = 5**0.5 * h
        return (1 + s + s * s / 3) * np.exp(-s)

    assert float(tensor_matern52(a, b, theta)) == pytest.approx(k(0.5) * k(0.5))
    # not the Matérn of the scaled Euclidean distance
    assert float(tensor_matern52(a, b, theta)) != pytest.approx(k(0.5 * 2**0.5))


def test_the_fit_interpolates_and_beta_is_the_gls_estimate() -> None:
    X, y = _data()
    model = KrigingSurrogate(FAST, 2, 1)
    model.fit(_with_trend(X), y, seed=0)
    mean, sd = model.predict(_with_trend(X))
    assert mean == pytest.approx(model.transform(y), abs=1e-4)  # nugget 1e-12: interpolation
    assert sd.max() < 1e-3
    fit = model.model.fit
    C = fit.sigma2 * tensor_matern52(fit.X, fit.X, fit.theta) + fit.tau2 * torch.eye(len(y))
    F, z = fit.F, torch.as_tensor(model.transform(y))
    gls = torch.linalg.solve(F.T @ torch.linalg.solve(C, F), F.T @ torch.linalg.solve(C, z))
    assert fit.beta.numpy() == pytest.approx(gls.numpy(), abs=1e-6)


def test_ranges_stay_in_diceKrigings_bounds_and_the_search_improves_the_start() -> None:
    X, y = _data(seed=1)
    model = KrigingSurrogate(FAST, 2, 1)
    report = model.fit(_with_trend(X), y, seed=3)
    spread = np.ptp(X, axis=0)
    assert all(0 < t <= 2 * s + 1e-9 for t, s in zip(report.lengthscales, spread, strict=True))
    Xs, F, z = model.model.fit.X.numpy(), model.model.fit.F.numpy(), model.transform(y)
    *_, start_value = model._start(Xs, F, z, X, 3)
    assert -report.mll <= start_value + 1e-9


def test_uk_variance_adds_the_trend_error_far_from_the_data() -> None:
    X, y = _data()
    model = KrigingSurrogate(FAST, 2, 1)
    model.fit(_with_trend(X), y, seed=0)
    far = _with_trend(np.array([[40.0, 5.0]]))
    _, sd = model.predict(far)
    fit = model.model.fit
    assert sd[0] ** 2 > fit.sigma2 + fit.tau2  # simple kriging would stop at sigma2
    mean, _ = model.predict(far)  # and far away the mean follows the GLS trend
    trend = float(fit.beta[0] + fit.beta[1] * 40.0)
    assert float(mean[0]) == pytest.approx(trend, rel=1e-3)


def test_the_botorch_model_scores_and_conditions_like_the_fit() -> None:
    X, y = _data()
    model = KrigingSurrogate(FAST, 2, 1)
    model.fit(_with_trend(X), y, seed=0)
    candidates = _with_trend(np.random.default_rng(5).uniform(0, 10, size=(7, 2)))
    mean, sd = model.predict(candidates)
    ucb = UpperConfidenceBound(model.model, beta=0.09, maximize=False)
    scores = ucb(torch.as_tensor(candidates).unsqueeze(1)).detach().numpy()
    assert scores == pytest.approx(-(mean - 0.3 * sd), abs=1e-8)
    x = torch.as_tensor(candidates[:1])
    seen = model.model.condition_on_observations(x, torch.tensor([[float(mean[0])]]))
    post = seen.posterior(x.unsqueeze(0))
    assert float(post.variance) < 1e-6 and float(post.mean) == pytest.approx(float(mean[0]))


def test_the_log_transform_and_nugget_follow_the_settings() -> None:
    X, y = _data()
    model = KrigingSurrogate(KrigingSettings(starts=20, log_transform=True, nugget=1e-6), 2, 1)
    model.fit(_with_trend(X), y, seed=0)
    z = model.transform(y)
    assert z.mean() == pytest.approx(0.0, abs=1e-9)
    assert np.corrcoef(z, np.log(y))[0, 1] == pytest.approx(1.0)
    assert model.model.fit.tau2 == 1e-6


def test_a_nugget_in_the_objectives_units_is_that_variance_of_the_response() -> None:
    X, y = _data()
    fraction = KrigingSurrogate(KrigingSettings(starts=20, nugget=1e-4), 2, 1)
    fraction.fit(_with_trend(X), y, seed=0)
    objective = KrigingSettings(
        starts=20, nugget=1e-4 * np.var(y, ddof=1), nugget_units="objective"
    )
    absolute = KrigingSurrogate(objective, 2, 1)
    absolute.fit(_with_trend(X), y, seed=0)
    assert absolute.model.fit.tau2 == pytest.approx(1e-4)
    points = _with_trend(np.random.default_rng(2).uniform(0, 10, size=(5, 2)))
    for a, b in zip(absolute.predict(points), fraction.predict(points), strict=True):
        assert a == pytest.approx(b, rel=1e-6)


def test_a_nugget_that_swamps_the_response_leaves_the_trend_alone() -> None:
    """The seeds' ``nugget = 1e-3`` on run times of ~1e-10 s: no interpolation, the mean
    is the least-squares trend and the variance that of its prediction."""
    X, y = _data()
    y = y * 1e-10
    model = KrigingSurrogate(
        KrigingSettings(starts=20, nugget=1e-3, nugget_units="objective"), 2, 1
    )
    model.fit(_with_trend(X), y, seed=0)
    F = np.column_stack([np.ones(len(y)), X[:, 0]])
    z = model.transform(y)
    ols = F @ np.linalg.lstsq(F, z, rcond=None)[0]
    mean, sd = model.predict(_with_trend(X))
    assert mean == pytest.approx(ols, abs=1e-6)
    leverage = np.einsum("ij,jk,ik->i", F, np.linalg.inv(F.T @ F), F)
    tau2 = model.model.fit.tau2
    assert sd**2 == pytest.approx(tau2 * (1 + leverage), rel=1e-6)


def test_a_singular_design_raises_a_surrogate_error() -> None:
    X, y = _data(n=6)
    X = np.vstack([X, X])  # every point twice and no nugget: C is singular for any range
    model = KrigingSurrogate(KrigingSettings(starts=10, nugget=0.0), 2, 1)
    with pytest.raises(SurrogateError, match="positive definite"):
        model.fit(_with_trend(X), np.concatenate([y, y + 1]), seed=0)
