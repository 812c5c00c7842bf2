"""The surrogate's own marginal-likelihood closure returns GPyTorch's floats, bit for bit,
so that a fit takes the very same L-BFGS steps as with BoTorch's closure."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from botorch.optim.closures import get_loss_closure_with_grads
from botorch.optim.utils import get_parameters_and_bounds
from gpytorch.mlls import ExactMarginalLogLikelihood
from gpytorch.priors import GammaPrior, LogNormalPrior, NormalPrior

from gpautotune.surrogate import GPSettings, GPSurrogate
from gpautotune.surrogate._mll import _log_prior, closed_form_closure, exact_mll_closure


def _model(settings: GPSettings, d: int, k: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    surrogate = GPSurrogate(settings, d, k)
    X = rng.random((n, d + k))
    y = np.exp(X[:, 0] - X[:, -1] + 0.3 * rng.standard_normal(n))
    model = surrogate._build(*surrogate._tensors(X, y))
    # away from the defaults: every term of the loss matters
    base, top = model.covar_module.base_kernel, settings.lengthscale_max or 3.0
    base.lengthscale = torch.as_tensor(rng.uniform(0.05, 0.9 * top, (1, d)))
    model.covar_module.outputscale = float(rng.uniform(0.3, 3.0))
    if settings.noise == "learned":
        model.likelihood.noise = float(rng.uniform(1e-4, 0.1))
    with torch.no_grad():
        model.mean_module.weights.copy_(torch.as_tensor(rng.normal(size=k)))
        model.mean_module.constant.fill_(float(rng.normal()))
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    mll.train()
    parameters = {n: p for n, p in get_parameters_and_bounds(mll)[0].items() if p.requires_grad}
    return model, mll, parameters


@pytest.mark.parametrize(
    ("options", "d", "k", "n"),
    [
        ({}, 6, 1, 120),  # the default GP
        ({"lengthscale_max": 2.0}, 3, 2, 40),  # a constrained (transformed) length-scale
        ({"kernel": "matern32"}, 10, 0, 75),  # no trend features
        ({"kernel": "rbf"}, 4, 3, 33),
        ({"lengthscale_prior": "gamma"}, 5, 2, 50),  # a gamma prior on the length-scales
        ({"lengthscale_prior": "unit", "kernel": "matern32"}, 4, 1, 60),
        ({}, 4, 1, 900),  # beyond GPyTorch's max_cholesky_size (800)
    ],
)
def test_value_and_gradients_equal_botorchs_closure_bit_for_bit(
    options: dict, d: int, k: int, n: int
) -> None:
    settings = GPSettings(**options)
    for seed in range(3):
        model, mll, parameters = _model(settings, d, k, n, seed)
        reference = get_loss_closure_with_grads(mll, parameters=parameters)
        value, grads = reference()
        grads = [g.clone() for g in grads]
        closure = exact_mll_closure(model, parameters)
        assert closure is not None
        mine, my_grads = closure()
        assert torch.equal(mine, value)
        assert len(my_grads) == len(grads) == len(parameters)
        for name, a, b in zip(parameters, my_grads, grads, strict=True):
            assert torch.equal(a, b), name


@pytest.mark.parametrize(
    "prior",
    [
        LogNormalPrior(0.5, 1.7),
        NormalPrior(0.2, 0.8),
        GammaPrior(2.0, 0.15),
        LogNormalPrior(-1.0, 0.5, transform=torch.exp),  # a transformed prior: torch's own
    ],
)
def test_each_prior_term_is_torchs_log_prob_bit_for_bit(prior) -> None:
    module = torch.nn.Module()
    module.theta = torch.nn.Parameter(torch.tensor([0.3, 1.1, 2.9], dtype=torch.float64))
    terms = []
    for log_prior in (lambda: prior.log_prob(module.theta), _log_prior(prior, _theta, module)):
        module.theta.grad = None
        value = log_prior()
        value.sum().backward()
        terms.append((value.detach(), module.theta.grad.clone()))
    (value, grad), (mine, my_grad) = terms
    assert torch.equal(mine, value)
    assert torch.equal(my_grad, grad)


def test_a_log_normal_prior_outside_its_support_raises_torchs_error() -> None:
    module = torch.nn.Module()
    module.theta = torch.nn.Parameter(torch.tensor([0.5, -0.1], dtype=torch.float64))
    with pytest.raises(ValueError, match="support"):
        _log_prior(LogNormalPrior(0.0, 1.0), _theta, module)()


def _theta(module: torch.nn.Module) -> torch.Tensor:
    return module.theta


def _fit_end(make_closure) -> torch.Tensor:
    """Every raw hyperparameter after a whole fit (L-BFGS from the defaults) of one model
    with the closure ``make_closure(model, parameters)`` gives (None: BoTorch's own)."""
    from botorch.optim.fit import fit_gpytorch_mll_scipy

    model, mll, parameters = _model(GPSettings(), 5, 1, 60, seed=4)
    closure = make_closure(model, parameters)
    fit_gpytorch_mll_scipy(mll, parameters=parameters, closure=closure)
    return torch.cat([p.detach().reshape(-1) for p in parameters.values()])


def _botorchs(model, parameters) -> None:
    return None


def test_the_fitted_hyperparameters_are_botorchs() -> None:
    """A whole fit ends where BoTorch's closure ends, bit for bit."""
    assert torch.equal(_fit_end(exact_mll_closure), _fit_end(_botorchs))


@pytest.mark.parametrize(
    ("settings", "d"),
    [
        (GPSettings(input_warp="kumaraswamy"), 3),  # an input transform
        (GPSettings(noise=1e-4), 3),  # fixed noise
        (GPSettings(), 1),  # one dimension: GPyTorch's own autograd function
    ],
)
def test_other_models_keep_botorchs_closure(settings: GPSettings, d: int) -> None:
    model, _, parameters = _model(settings, d, 1, 20, seed=0)
    assert exact_mll_closure(model, parameters) is None


@pytest.mark.parametrize(("d", "k", "n"), [(6, 1, 120), (10, 0, 75), (3, 4, 30)])
def test_the_closed_form_gradient_is_autograds_to_rounding(d: int, k: int, n: int) -> None:
    """The hand-written gradient: BoTorch's value, and its gradients within rounding."""
    for seed in range(3):
        model, mll, parameters = _model(GPSettings(), d, k, n, seed)
        value, grads = get_loss_closure_with_grads(mll, parameters=parameters)()
        grads = [g.clone() for g in grads]
        closure = closed_form_closure(model, parameters)
        assert closure is not None
        mine, my_grads = closure()
        assert torch.isclose(mine, value, rtol=1e-12, atol=0)
        for name, a, b in zip(parameters, my_grads, grads, strict=True):
            assert a.shape == b.shape, name
            if b.numel():  # no trend features: an empty weight vector
                assert float((a - b).abs().max()) <= 1e-10 * float(b.abs().max()) + 1e-14, name


def test_a_closed_form_fit_ends_where_botorchs_ends() -> None:
    ends = _fit_end(closed_form_closure), _fit_end(_botorchs)
    assert torch.allclose(*ends, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize(
    "settings",
    [
        GPSettings(kernel="matern32"),
        GPSettings(kernel="rbf"),
        GPSettings(lengthscale_max=2.0),  # a transformed length-scale
        GPSettings(noise=1e-4),
        GPSettings(input_warp="kumaraswamy"),
    ],
)
def test_the_closed_form_covers_only_the_default_kernel(settings: GPSettings) -> None:
    model, _, parameters = _model(settings, 3, 1, 20, seed=0)
    assert closed_form_closure(model, parameters) is None


def test_a_surrogate_with_the_closed_form_gradient_fits_like_the_default() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((50, 5))
    y = np.exp(X[:, 0] - 2 * X[:, 1] + 0.1 * rng.standard_normal(50))
    means = []
    for gradient in ("autograd", "closed_form"):
        surrogate = GPSurrogate(GPSettings(gradient=gradient), 4, 1)
        surrogate.fit(X, y, seed=0)
        means.append(surrogate.predict(X[:10])[0])
    assert np.allclose(means[0], means[1], atol=1e-3)
