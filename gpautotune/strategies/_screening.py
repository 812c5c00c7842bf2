"""Screening: fix the parameters that do not matter, then tune the others.

After the initial design, the GPR strategy (option ``screen=threshold``) fits a GP to
the initial trials, computes box Sobol indices on its posterior paths
(:func:`~gpautotune.analysis.surrogate_indices`) and fixes every parameter whose total
index ST has its **upper** interval bound below ``threshold`` to its level in the best
initial configuration (seed 003 §5: screen, restrict, go on). Fixing a factor ``i`` at
any level changes the function by at most a mean squared error of order
``2 ST_i Var(f)`` (Sobol' et al. 2007, RESS 92:957), so a small upper bound makes the
restriction cheap by the model's own account; the interval guards against fixing a
factor only because the initial design saw too little of it.

From then on, every candidate row has the fixed parameters at their levels: the
strategy's :class:`~gpautotune.acquisition.CandidatePool` is replaced by one built with
``fixed=`` (BoTorch's ``fixed_features``), which projects every candidate onto the
subspace before the usual validity and novelty filters. The GP keeps modelling every
parameter (all trials stay training data). Each model proposal records ``screened``
(name -> fixed value) in its trial info, and the first one also ``screen_st_high`` and
``screen_s``.

The decision uses only the first ``n_init`` trials, the strategy's seed and a fresh GP,
so a resumed run takes the same decision.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpautotune.sensitivity import surrogate_indices
from gpautotune.space import Space
from gpautotune.strategies._base import Proposal
from gpautotune.surrogate import GPSurrogate, SurrogateError
from gpautotune.trial import Trial

__all__ = ["ScreenDecision", "Screening", "decide"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScreenDecision:
    """What screening fixed: ``fixed`` maps names to values; ``st_high`` every parameter's
    ST upper bound."""

    fixed: dict[str, Any]
    st_high: dict[str, float]
    threshold: float
    seconds: float = 0.0


def decide(
    st_high: Mapping[str, float], best: Mapping[str, Any], threshold: float
) -> dict[str, Any]:
    """Parameters to fix (ST upper bound below ``threshold``) at their ``best`` values.

    At least one parameter (the one of largest upper bound) is always left free.
    """
    keep = max(st_high, key=lambda k: st_high[k])
    return {k: best[k] for k, v in st_high.items() if v < threshold and k != keep}


class Screening:
    """The "screen, then tune" step of :class:`~gpautotune.strategies.gpr.GPRStrategy`.

    Args:
        threshold: fix parameters whose ST upper bound is below this (0 < threshold < 1;
            checked by the strategy's settings).
        n: Saltelli base rows of the screening indices.
        paths: GP posterior paths.
        bootstrap: bootstrap resamples.
    """

    def __init__(
        self, threshold: float, *, n: int = 256, paths: int = 16, bootstrap: int = 50
    ) -> None:
        self.threshold, self.n, self.paths, self.bootstrap = float(threshold), n, paths, bootstrap
        self.decision: ScreenDecision | None = None

    def screen(
        self,
        initial: Sequence[Trial],
        gp: GPSurrogate,
        features: Callable[[np.ndarray], np.ndarray],
        space: Space,
        seed: int,
    ) -> ScreenDecision:
        """Decide (once) what to fix from the ``initial`` trials, with a fresh ``gp``."""
        t0 = time.perf_counter()
        ok = [t for t in initial if t.ok]
        if len(ok) < 2:
            self.decision = ScreenDecision({}, {}, self.threshold)
            return self.decision
        index = space.to_index([t.config for t in ok])
        values = np.array([t.value for t in ok], dtype=float)
        try:
            gp.fit(features(index), values, seed=seed)
            result = surrogate_indices(
                gp,
                features,
                space,
                n=self.n,
                paths=self.paths,
                bootstrap=self.bootstrap,
                seed=seed,
                mean_function=False,
            )
        except (SurrogateError, RuntimeError) as exc:
            _log.warning("screening skipped: %s", exc)
            self.decision = ScreenDecision({}, {}, self.threshold, time.perf_counter() - t0)
            return self.decision
        st_high = {
            str(k): round(float(v), 5)
            for k, v in zip(result.table["parameter"], result.table["ST_high"], strict=True)
        }
        best = min(ok, key=lambda t: t.value).config
        fixed = decide(st_high, best, self.threshold)
        _log.info("screening fixed %d of %d parameters: %s", len(fixed), space.dims, fixed)
        self.decision = ScreenDecision(fixed, st_high, self.threshold, time.perf_counter() - t0)
        return self.decision

    def annotate(self, proposals: list[Proposal], *, reported: bool) -> list[Proposal]:
        """The proposals with the decision in their info (``screened``; the first one
        also ``screen_st_high`` and ``screen_s`` unless a told trial has them:
        ``reported``)."""
        if self.decision is None:
            return proposals
        info: dict[str, Any] = {"screened": self.decision.fixed}
        if not reported and proposals:
            info |= {
                "screen_st_high": self.decision.st_high,
                "screen_s": round(self.decision.seconds, 3),
            }
        first = [Proposal(proposals[0].config, {**proposals[0].info, **info})] if proposals else []
        info = {"screened": self.decision.fixed}
        return first + [Proposal(p.config, {**p.info, **info}) for p in proposals[1:]]
