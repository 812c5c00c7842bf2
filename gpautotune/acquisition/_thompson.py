"""Thompson sampling over a finite candidate set (``thompson_every``).

Thompson (1933); for BO, Kandasamy et al. (2018), "Parallelised Bayesian optimisation via
Thompson sampling": the pick is the minimiser of one draw of the GP's posterior over the
candidates, so that a configuration is picked with the posterior's probability that it is
the best of them. Unlike an acquisition it is random: two runs whose models agree can pick
differently, which is what it is for here (a run whose EI keeps ranking the same basin
first gets picks from wherever else the posterior could put the optimum).

The draw is joint over the candidates (a posterior sample at each one independently would
favour the most uncertain). Over an enumerated table (up to 100,000 configurations) a
joint draw is too large, so it is taken over a subset: the ``top`` candidates by the
step's acquisition and ``spread`` others drawn uniformly, seeded by the step. BoTorch's
``MaxPosteriorSampling`` does the same draw through ``posterior.rsample``, which takes no
seed of its own, and ``rsample_from_base_samples``, which does, factors a covariance larger
than GPyTorch's ``max_cholesky_size`` (800 rows; a draw here has up to 1,000) by Lanczos, an
approximation; here the covariance is factored by Cholesky and the standard normals come
from the step's NumPy generator, so that a replayed step (a resumed run) draws the same
sample.
"""

from __future__ import annotations

import numpy as np
import torch
from botorch.models.model import Model
from linear_operator.utils.cholesky import psd_safe_cholesky

__all__ = ["thompson_subset", "thompson_pick"]


def thompson_subset(
    scores: np.ndarray, rng: np.random.Generator, top: int = 500, spread: int = 500
) -> np.ndarray:
    """Positions of the candidates a draw is taken over: the ``top`` best by ``scores``
    (higher is better; non-finite ones left out) and up to ``spread`` of the others drawn
    uniformly without replacement, in increasing order."""
    finite = np.flatnonzero(np.isfinite(scores))
    if len(finite) <= top + spread:
        return finite
    order = finite[np.argsort(-scores[finite], kind="stable")]
    rest = rng.choice(order[top:], size=spread, replace=False)
    return np.sort(np.concatenate([order[:top], rest]))


def thompson_pick(model: Model, X: np.ndarray, rng: np.random.Generator) -> int:
    """The row of ``X`` (model inputs) at which one joint draw of ``model``'s posterior is
    lowest (the objective is minimised)."""
    x = torch.as_tensor(X, dtype=torch.float64)
    with torch.no_grad():
        mvn = model.posterior(x).mvn
        mean = mvn.mean.reshape(-1)
        chol = psd_safe_cholesky(mvn.covariance_matrix, max_tries=6)
    eps = torch.as_tensor(rng.standard_normal(len(X)), dtype=torch.float64)
    sample = mean + chol @ eps
    return int(torch.argmin(sample))
