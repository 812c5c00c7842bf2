"""The GP surrogate keeps no memory between fits: warm starts are arguments, and stored
hyperparameters rebuild the very same model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from gpautotune.exceptions import ConfigError
from gpautotune.surrogate import GPSettings, GPSurrogate, SurrogateError


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 4))  # 3 kernel inputs, 1 trend feature
    y = np.exp(X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(n))
    return X, y


def test_restored_hyperparameters_give_the_fitted_model_exactly() -> None:
    X, y = _data(12)
    fitted = GPSurrogate(GPSettings(restarts=0), 3, 1)
    fitted.fit(X, y, seed=3)
    stored = json.loads(json.dumps(fitted.hyperparameters))  # as the journal keeps them
    restored = GPSurrogate(GPSettings(restarts=0), 3, 1)
    restored.restore(X, y, stored)
    grid, _ = _data(50, seed=1)
    for a, b in zip(fitted.predict(grid), restored.predict(grid), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_warm_start_is_an_argument_not_a_memory() -> None:
    """Fitting from stored hyperparameters in a new surrogate gives what the surrogate
    that made them gives: nothing else carries over from one fit to the next."""
    X, y = _data(10)
    first = GPSurrogate(GPSettings(restarts=0), 3, 1)
    first.fit(X[:8], y[:8], seed=1)
    warm = json.loads(json.dumps(first.hyperparameters))
    first.fit(X, y, seed=2, warm=warm, fresh=False)
    other = GPSurrogate(GPSettings(restarts=0), 3, 1)
    other.fit(X, y, seed=2, warm=warm, fresh=False)
    assert first.hyperparameters == other.hyperparameters
    cold = GPSurrogate(GPSettings(restarts=0), 3, 1)
    cold.fit(X, y, seed=2)
    assert cold.hyperparameters != other.hyperparameters  # the start matters, so it is tested


def test_the_unit_prior_keeps_an_inert_input_within_the_unit_range() -> None:
    """The third input has no effect. The default prior (long length-scales, in 3 inputs
    a median near 6) lets it drift far beyond the unit box, as the fits of method codes on
    the pnpoly caches did (length-scales of 20 to 45); ``unit`` keeps it nearer the range,
    so the model does not rule a parameter out."""
    X, y = _data(30)
    scales = {}
    for prior in ("dim_scaled", "unit"):
        gp = GPSurrogate(GPSettings(restarts=0, lengthscale_prior=prior), 3, 1)
        scales[prior] = gp.fit(X, y, seed=0).lengthscales
    assert scales["dim_scaled"][2] > 5.0
    assert scales["unit"][2] < 0.5 * scales["dim_scaled"][2]
    assert all(s < 5.0 for s in scales["unit"])


def test_the_input_warp_bends_only_the_kernel_inputs_and_is_restored_exactly() -> None:
    """``input_warp="kumaraswamy"``: the first input acts only near its upper end, so its
    fitted warp leaves the identity (concentrations 1); the trend feature is not among the
    warped columns; stored parameters rebuild the same model."""
    rng = np.random.default_rng(0)
    X = rng.random((40, 4))
    y = np.exp(3 * X[:, 0] ** 8 + 0.05 * X[:, 1] + 0.01 * rng.standard_normal(40))
    settings = GPSettings(restarts=0, input_warp="kumaraswamy")
    fitted = GPSurrogate(settings, 3, 1)
    fitted.fit(X, y, seed=0)
    warp = fitted.model.input_transform
    assert warp.indices.tolist() == [0, 1, 2]
    c0, c1 = (np.log(getattr(warp, f"concentration{i}").detach().numpy()) for i in (0, 1))
    assert abs(c0[0]) + abs(c1[0]) > 0.5
    restored = GPSurrogate(settings, 3, 1)
    restored.restore(X, y, json.loads(json.dumps(fitted.hyperparameters)))
    grid = rng.random((30, 4))
    for a, b in zip(fitted.predict(grid), restored.predict(grid), strict=True):
        np.testing.assert_array_equal(a, b)
    plain = GPSurrogate(GPSettings(restarts=0), 3, 1)
    plain.fit(X, y, seed=0)
    assert not any("concentration" in name for name in plain.hyperparameters)


def test_leave_one_out_means_are_the_posterior_of_the_other_points() -> None:
    """The closed form equals conditioning on the other points with the same model: the
    prior mean plus ``K[i, -i] K[-i, -i]^-1 (z[-i] - m[-i])``, for every point."""
    X, y = _data(15)
    gp = GPSurrogate(GPSettings(restarts=0), 3, 1)
    gp.fit(X, y, seed=1)
    mu, z = gp.loo_means()
    np.testing.assert_allclose(z, gp.transform(y))
    model = gp.model
    model.train()
    with torch.no_grad():
        prior = model.likelihood(model(model.train_inputs[0]))
        K, m = prior.covariance_matrix.numpy(), prior.mean.numpy()
    model.eval()
    for i in range(len(y)):
        rest = np.arange(len(y)) != i
        expected = m[i] + K[i, rest] @ np.linalg.solve(K[np.ix_(rest, rest)], z[rest] - m[rest])
        assert mu[i] == pytest.approx(expected, abs=1e-8)
    assert not np.allclose(mu, z)  # held out, not fitted through


@pytest.mark.parametrize(
    "settings",
    [
        {"kernel": "rbff"},
        {"lengthscale_prior": "gama"},
        {"output_warp": "copulaa"},
        {"gradient": "closed"},
        {"noise": -1.0},
        {"noise": "lerned"},
        {"lengthscale_max": 0.01},
        {"restarts": -1},
    ],
)
def test_gp_settings_the_fit_would_misread_are_refused(settings):
    with pytest.raises(ConfigError, match=f"GPSettings.{next(iter(settings))}"):
        GPSettings(**settings)


def test_data_no_fit_can_use_is_named() -> None:
    X, y = _data(8)
    gp = GPSurrogate(GPSettings(restarts=0), 3, 1)
    with pytest.raises(SurrogateError, match="y has 1 NaN or infinite"):
        gp.fit(X, np.where(np.arange(8) == 2, np.nan, y))
    with pytest.raises(SurrogateError, match=r"got X \(8, 4\), y \(7,\)"):
        gp.fit(X, y[:7])
    gp.fit(X, y)
    with pytest.raises(SurrogateError, match="rows of 4 columns"):
        gp.predict(X[:, :3])


@pytest.mark.parametrize(
    ("kernel", "nu"), [("matern52", 2.5), ("matern32", 1.5), ("matern12", 0.5)]
)
def test_each_matern_kernel_has_its_smoothness(kernel, nu) -> None:
    """``matern12`` (the exponential kernel) is a Matérn kernel of ν = 1/2: rougher than
    the default, so two configurations one step apart are less alike under it."""
    X, y = _data(15)
    gp = GPSurrogate(GPSettings(restarts=0, kernel=kernel), 3, 1)
    gp.fit(X, y, seed=0)
    assert gp.model.covar_module.base_kernel.nu == nu
    mean, sd = gp.predict(X[:3])
    assert np.all(np.isfinite(mean)) and np.all(sd >= 0)
