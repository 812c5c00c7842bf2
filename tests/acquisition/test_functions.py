import numpy as np
import pytest
import torch

from gpautotune.acquisition import (
    expected_improvement,
    make_acquisition,
    score_candidates,
    score_many,
)
from gpautotune.surrogate import GPSettings, GPSurrogate


def _surrogate(noise="learned", trend=2):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 3 + trend))
    y = np.exp(np.sin(4 * X[:, 0]) + X[:, 1] ** 2 + 0.1 * rng.normal(size=30))
    gp = GPSurrogate(GPSettings(noise=noise, restarts=0), 3, trend)
    gp.fit(X, y)
    return gp, rng.uniform(size=(500, 3 + trend))


@pytest.mark.parametrize("kind", ["logei", "ei", "pi", "lcb"])
@pytest.mark.parametrize("noise", ["learned", 1e-3])
def test_fast_scores_equal_botorch_acquisition_functions(kind, noise):
    gp, candidates = _surrogate(noise)
    model = gp.model
    if noise == "learned":  # a kriging-believer model, conditioned on one more point
        x = torch.as_tensor(candidates[:1])
        with torch.no_grad():
            model = model.condition_on_observations(x, model.posterior(x).mean.reshape(1, 1))
    acqf = make_acquisition(kind, model, best_f=-0.5, kappa=0.7)
    fast = score_candidates(acqf, candidates)
    with torch.no_grad():
        reference = acqf(torch.as_tensor(candidates).unsqueeze(1)).numpy()
    np.testing.assert_allclose(fast, reference, rtol=1e-6, atol=1e-6)
    assert len(set(np.round(fast, 6))) > 100  # really scored, not constant


def test_a_portfolio_scored_from_one_posterior_equals_each_function_alone():
    gp, candidates = _surrogate()
    acqfs = [
        make_acquisition(kind, gp.model, best_f=-0.5, kappa=1.96) for kind in ("logei", "pi", "lcb")
    ]
    together = score_many(acqfs, candidates, chunk=128)  # several chunks
    for acqf, values in zip(acqfs, together, strict=True):
        with torch.no_grad():
            reference = acqf(torch.as_tensor(candidates).unsqueeze(1)).numpy()
        np.testing.assert_allclose(values, reference, rtol=1e-6, atol=1e-6)
    assert not np.allclose(together[0], together[2])  # three functions, not one three times


def _default_model(rng, kernel="matern52"):
    """The surrogate's GP (10 kernel inputs, one trend feature) on 120 random rows, at its
    starting hyperparameters, in evaluation mode."""
    X = rng.uniform(size=(120, 11))
    gp = GPSurrogate(GPSettings(kernel=kernel), 10, 1)
    return gp._build(*gp._tensors(X, np.exp(rng.normal(size=120)))).eval()


def test_scores_are_the_same_floats_on_one_thread_and_on_several():
    """GPR scores its pool on the process's threads and fits on one: a pool as large as
    the biggest cache's (large enough for torch's and MKL's parallel paths) gets the same
    values to the last bit, so the thread count changes the time of a run, not the run."""
    rng = np.random.default_rng(3)
    model = _default_model(rng)
    acqfs = [make_acquisition(k, model, best_f=-0.5, kappa=0.7) for k in ("logei", "lcb")]
    pool = rng.uniform(size=(18_000, 11))
    before = torch.get_num_threads()
    try:
        scores = {}
        for threads in (1, 2, 4):
            torch.set_num_threads(threads)
            scores[threads] = score_many(acqfs, pool)
    finally:
        torch.set_num_threads(before)
    for threads in (2, 4):
        for one, many in zip(scores[1], scores[threads], strict=True):
            assert np.array_equal(one, many)
    assert len(np.unique(scores[1][0])) > 10_000  # really scored


@pytest.mark.parametrize("kernel", ["matern52", "matern32"])
def test_a_chunk_scored_in_blocks_is_the_same_floats_as_scored_whole(kernel):
    """The default kernel's chunks are computed in cache-sized blocks of rows, centred on
    the chunk's mean as GPyTorch centres it: the posterior is the same to the last bit for
    any block size, ragged last blocks included, on one thread and on several."""
    from gpautotune.acquisition._functions import _ExactPosterior

    rng = np.random.default_rng(5)
    model = _default_model(rng, kernel)
    chunk = torch.as_tensor(rng.uniform(size=(8192, 11)))
    before = torch.get_num_threads()
    try:
        with torch.no_grad():
            whole = _ExactPosterior(model, block=len(chunk))(chunk)
            assert _ExactPosterior(model).matern is not None  # the blocked path is taken
            for threads, block in ((1, 1024), (1, 300), (2, 1024), (2, 4000)):
                torch.set_num_threads(threads)
                blocked = _ExactPosterior(model, block=block)(chunk)
                for a, b in zip(whole, blocked, strict=True):
                    assert torch.equal(a, b), (threads, block)
    finally:
        torch.set_num_threads(before)
    assert len(torch.unique(whole[1])) > 8000  # really computed


def test_expected_improvement_of_given_moments_is_jones_formula():
    """EI below ``best_f`` from means and standard deviations (a random forest's), checked
    against the closed form; a zero spread gives the plain improvement."""
    from scipy.stats import norm

    mean = np.array([0.0, 1.0, -0.5, 2.0, -1.0])
    sd = np.array([1.0, 0.5, 2.0, 0.1, 0.0])
    best = 0.2
    got = expected_improvement(mean, sd, best)
    z = (best - mean[:4]) / sd[:4]
    expected = (best - mean[:4]) * norm.cdf(z) + sd[:4] * norm.pdf(z)
    assert np.allclose(got[:4], expected, rtol=1e-9, atol=1e-300)
    assert got[4] == pytest.approx(1.2)
    assert np.all(np.diff(expected_improvement(np.zeros(3), np.array([0.1, 1, 10]), 0.0)) > 0)


def test_lcb_refuses_a_negative_kappa():
    gp, _ = _surrogate("learned")
    with pytest.raises(ValueError, match="kappa >= 0"):  # kappa**2 scored -1 as +1
        make_acquisition("lcb", gp.model, best_f=-0.5, kappa=-1.0)
