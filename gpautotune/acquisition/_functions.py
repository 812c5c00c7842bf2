"""Acquisition functions over a finite candidate set (BoTorch's analytic forms).

All are *maximised*; the objective is minimised (``maximize=False``). Scores are
computed in chunks of ``b x 1 x D`` tensors, the shape BoTorch's analytic acquisition
functions expect.

* ``logei`` — log expected improvement (numerically stable EI; the default);
* ``ei`` — expected improvement (Jones' EGO formula);
* ``pi`` — log probability of improvement;
* ``lcb`` — lower confidence bound ``mean - kappa * sd`` (BoTorch's UCB with
  ``beta = kappa^2`` and ``maximize=False`` returns its negative).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction
from botorch.acquisition.analytic import (
    ExpectedImprovement,
    LogExpectedImprovement,
    LogProbabilityOfImprovement,
    UpperConfidenceBound,
)
from botorch.models.model import Model

__all__ = ["Acquisition", "make_acquisition", "score_candidates"]

Acquisition = Literal["logei", "ei", "pi", "lcb"]


def make_acquisition(kind: Acquisition, model: Model, best_f: float, kappa: float = 0.3) -> AcquisitionFunction:
    """The acquisition ``kind`` for minimisation with incumbent ``best_f`` (model units)."""
    if kind == "logei":
        return LogExpectedImprovement(model, best_f=best_f, maximize=False)
    if kind == "ei":
        return ExpectedImprovement(model, best_f=best_f, maximize=False)
    if kind == "pi":
        return LogProbabilityOfImprovement(model, best_f=best_f, maximize=False)
    if kind == "lcb":
        return UpperConfidenceBound(model, beta=kappa**2, maximize=False)
    raise ValueError(f"unknown acquisition {kind!r}; choose logei, ei, pi or lcb")


def score_candidates(acqf: AcquisitionFunction, X: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """Acquisition values of the rows of ``X`` (``n x D``), higher is better."""
    out = []
    with torch.no_grad():
        for start in range(0, len(X), chunk):
            block = torch.as_tensor(X[start:start + chunk], dtype=torch.float64).unsqueeze(1)
            out.append(acqf(block).numpy())
    return np.concatenate(out) if out else np.empty(0)
