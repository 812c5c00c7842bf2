import numpy as np
import torch
from botorch.models import SingleTaskGP

from gpautotune.acquisition import thompson_pick, thompson_subset


def test_the_subset_holds_the_best_scores_and_a_seeded_spread():
    scores = np.arange(100, dtype=float)
    scores[[3, 7]] = -np.inf
    a = thompson_subset(scores, np.random.default_rng(1), top=10, spread=20)
    b = thompson_subset(scores, np.random.default_rng(1), top=10, spread=20)
    assert len(a) == 30 and np.array_equal(a, b) and np.all(np.diff(a) > 0)
    assert set(range(90, 100)) <= set(a.tolist())
    assert not {3, 7} & set(a.tolist())
    c = thompson_subset(scores, np.random.default_rng(2), top=10, spread=20)
    assert not np.array_equal(a, c)  # the spread follows the generator
    small = thompson_subset(scores[:20], np.random.default_rng(1), top=10, spread=20)
    assert small.tolist() == [i for i in range(20) if i not in (3, 7)]


def _gp(x: np.ndarray, y: np.ndarray, noise: float) -> SingleTaskGP:
    X = torch.as_tensor(x, dtype=torch.float64)
    Y = torch.as_tensor(y, dtype=torch.float64).reshape(-1, 1)
    model = SingleTaskGP(X, Y, train_Yvar=torch.full_like(Y, noise), outcome_transform=None)
    model.covar_module.lengthscale = 0.2
    model.eval()
    return model


def test_a_confident_posterior_picks_its_minimum_and_an_uncertain_one_varies():
    x = np.linspace(0, 1, 11)[:, None]
    y = 10 * (x[:, 0] - 0.7) ** 2 - 1
    sure = _gp(x, y, 1e-6)
    picks = {thompson_pick(sure, x, np.random.default_rng(s)) for s in range(20)}
    assert picks == {7}
    # far from the data the posterior is the prior: draws disagree on the minimiser
    far = np.linspace(5, 9, 9)[:, None]
    picks = {thompson_pick(sure, far, np.random.default_rng(s)) for s in range(40)}
    assert len(picks) >= 4
    assert thompson_pick(sure, far, np.random.default_rng(3)) == thompson_pick(
        sure, far, np.random.default_rng(3)
    )
