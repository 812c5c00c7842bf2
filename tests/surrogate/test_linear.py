"""Linear fits over a basis: coefficients, per-factor tests, Box-Cox, quantile regression."""

from __future__ import annotations

import numpy as np
import pytest

from gpautotune.space import IntRange, Ordinal, Space
from gpautotune.surrogate import boxcox_lambda, build_basis, estimable_columns, fit_linear


@pytest.fixture()
def space() -> Space:
    return Space([IntRange("a", 1, 10), IntRange("b", 1, 10), Ordinal("c", (1, 2))])


def _sample(space: Space, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    index = space.from_unit(rng.random((n, space.dims)))
    return index, space.columns(index), rng


def test_ols_recovers_a_model_and_ranks_the_active_factor_first(space: Space) -> None:
    index, cols, rng = _sample(space, 60)
    y = 3.0 + 2.0 * cols["a"] + 5.0 / cols["a"] + rng.normal(0, 0.1, len(index))
    basis = build_basis("a + 1/a + b + c", space)
    fit = fit_linear(basis, basis(cols), y)
    np.testing.assert_allclose(fit.predict(basis(cols)), y, atol=0.5)
    assert fit.ranked()[0] == "a"
    assert fit.significant(0.01) == ["a"]
    assert fit.pvalues["b"] > 0.01 and fit.pvalues["c"] > 0.01 and fit.test == "f-test"


def test_predictions_extend_to_new_points(space: Space) -> None:
    index, cols, _ = _sample(space, 30)
    basis = build_basis("a + b", space)
    fit = fit_linear(basis, basis(cols), 1.0 + cols["a"] - 2.0 * cols["b"])
    new = space.columns(space.to_index([{"a": 10, "b": 1, "c": 1}]))
    assert fit.predict(basis(new))[0] == pytest.approx(9.0)


def test_constant_and_collinear_terms_are_left_out(space: Space) -> None:
    index, cols, _ = _sample(space, 30)
    cols = dict(cols)
    cols["c"] = np.ones(30)  # constant in this sample
    basis = build_basis("a + c + a^2", space)
    H = basis(cols)
    H = np.column_stack([H, 2 * H[:, 0]])
    assert estimable_columns(H) == [0, 2]
    fit = fit_linear(basis, basis(cols), cols["a"] * 1.0)
    assert fit.kept == (0, 2) and np.isnan(fit.pvalues["c"])


def test_too_few_points_give_untestable_factors(space: Space) -> None:
    index, cols, _ = _sample(space, 3)
    basis = build_basis("a + b + c", space)
    fit = fit_linear(basis, basis(cols), np.array([1.0, 2.0, 3.0]))
    assert all(np.isnan(p) for p in fit.pvalues.values())


def test_boxcox_lambda_finds_the_log_of_a_multiplicative_model(space: Space) -> None:
    index, cols, rng = _sample(space, 200)
    X = np.column_stack([np.ones(200), cols["a"], cols["b"]])
    y = np.exp(0.3 * cols["a"] - 0.2 * cols["b"] + rng.normal(0, 0.05, 200))
    assert boxcox_lambda(X, y) == pytest.approx(0.0, abs=0.15)
    y_linear = 5 + 0.3 * cols["a"] + rng.normal(0, 0.05, 200)
    assert boxcox_lambda(X, y_linear) == pytest.approx(1.0, abs=0.5)


def test_auto_transform_only_for_heteroscedastic_residuals(space: Space) -> None:
    index, cols, rng = _sample(space, 120)
    basis = build_basis("a + b", space)
    spread = np.exp(0.4 * cols["a"] + rng.normal(0, 0.6, 120))  # variance grows with a
    fit = fit_linear(basis, basis(cols), spread, transform="auto")
    assert fit.boxcox_lambda is not None
    flat = 10 + cols["a"] + rng.normal(0, 0.3, 120)
    assert fit_linear(basis, basis(cols), flat, transform="auto").boxcox_lambda is None
    assert fit_linear(basis, basis(cols), flat, transform="boxcox").boxcox_lambda is not None
    negative = flat - 100
    assert fit_linear(basis, basis(cols), negative, transform="boxcox").boxcox_lambda is None


def test_quantile_regression_follows_the_lower_tail(space: Space) -> None:
    index, cols, rng = _sample(space, 400)
    basis = build_basis("a", space)
    # lower edge rises with a; the mean falls with a (noise grows as a falls)
    y = 1.0 + 0.1 * cols["a"] + rng.exponential(1.0, 400) * (11 - cols["a"])
    low = fit_linear(basis, basis(cols), y, quantile=0.05)
    mean = fit_linear(basis, basis(cols), y)
    grid = basis(
        space.columns(space.to_index([{"a": 1, "b": 1, "c": 1}, {"a": 10, "b": 1, "c": 1}]))
    )
    assert np.diff(low.predict(grid))[0] > 0 > np.diff(mean.predict(grid))[0]
    assert low.quantile == 0.05 and low.test in ("wald", "ols-f-test")
