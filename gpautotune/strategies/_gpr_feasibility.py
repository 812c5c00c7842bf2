"""GPR's failure model: how likely a configuration is to run, and how that weighs a score.

Configurations that fail (a compile or launch error, a replayed cache's missing row) say
nothing of the objective but much of where not to look. Once some of the told trials
failed and some ran, a GP classifier (scikit-learn's, Matérn 5/2 over the space's
encoding) gives each candidate's probability of success, and the acquisition is weighed
by it: EI times the probability (in log space for log-EI and PI); for LCB, which is no
probability-weighted quantity, candidates more likely to fail than not are dropped.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from gpautotune.acquisition import Acquisition
from gpautotune.space import Space
from gpautotune.trial import Trial

__all__ = ["feasibility_model", "likely_to_run", "success", "weigh"]


def feasibility_model(space: Space, trials: Sequence[Trial]) -> Any:
    """P(success) classifier of the told ``trials`` (None when they all ran or all
    failed)."""
    labels = np.array([t.ok for t in trials])
    if labels.all() or not labels.any():
        return None
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import Matern

    X = space.encode([t.config for t in trials])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GaussianProcessClassifier(kernel=Matern(nu=2.5), random_state=0).fit(X, labels)


def success(space: Space, rows: np.ndarray, feasible: Any) -> np.ndarray | None:
    """The classifier's probabilities that the index ``rows`` run (None without one)."""
    if feasible is None:
        return None
    return np.clip(feasible.predict_proba(space.encode(rows))[:, 1], 1e-9, 1.0)


def weigh(scores: np.ndarray, p: np.ndarray | None, kind: Acquisition) -> np.ndarray:
    """``kind``'s ``scores`` weighed by the success probabilities ``p``: EI x P(success)
    (in log space for logei and pi); for LCB, candidates more likely to fail than not are
    dropped (-inf)."""
    if p is None:
        return scores
    if kind == "lcb":
        keep = likely_to_run(p)
        return scores if keep is None else np.where(keep, scores, -np.inf)
    return scores + np.log(p) if kind in ("logei", "pi") else scores * p


def likely_to_run(p: np.ndarray | None) -> np.ndarray | None:
    """Which candidates with success probabilities ``p`` are more likely to run than not;
    None (keep them all) without a classifier or where none is."""
    if p is None or not (p >= 0.5).any():
        return None
    return p >= 0.5
