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
strategy's :class:`~gpautotune.acquisition.CandidatePool` is replaced by a
:class:`SubspacePool` that projects every candidate onto the subspace before the usual
validity and novelty filters. The GP keeps modelling every parameter (all trials stay
training data). Each model proposal records ``screened`` (name -> fixed value) in its
trial info, and the first one also ``screen_st_high`` and ``screen_s``.

The decision uses only the first ``n_init`` trials, the strategy's seed and a fresh GP,
so a resumed run takes the same decision.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpautotune.acquisition import CandidatePool, PoolSettings
from gpautotune.analysis.sensitivity import surrogate_indices
from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._base import Proposal
from gpautotune.surrogate import GPSurrogate, SurrogateError
from gpautotune.trial import Trial

if TYPE_CHECKING:
    from gpautotune.strategies.gpr import GPRStrategy

__all__ = ["ScreenDecision", "Screening", "SubspacePool", "decide"]

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


class SubspacePool(CandidatePool):
    """A candidate pool restricted to configurations with ``fixed`` parameter levels.

    Every candidate (Sobol sample, neighbourhood, backlog, or the enumerated valid set)
    is projected onto the subspace (fixed columns overwritten), then filtered as usual
    (valid, unseen, distinct).
    """

    def __init__(
        self, space: Space, settings: PoolSettings, seed: int | None, fixed: Mapping[str, Any]
    ) -> None:
        super().__init__(space, settings, seed)
        self.fixed = dict(fixed)
        self._columns = [space.names.index(k) for k in self.fixed]
        self._levels = [float(space[k].index_of([v])[0]) for k, v in self.fixed.items()]
        if self._all is not None:
            rows = space.unique_rows(self.project(self._all))
            self._all = rows[space.valid_mask(rows)]

    def project(self, rows: np.ndarray) -> np.ndarray:
        """``rows`` with the fixed parameters set to their levels."""
        rows = np.array(rows, dtype=float, copy=True)
        if len(rows) and self._columns:
            rows[:, self._columns] = self._levels
        return rows

    def _fresh(
        self,
        rows: np.ndarray,
        sources: np.ndarray,
        seen: Callable[[np.ndarray], np.ndarray],
        exclude: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        return super()._fresh(self.project(rows), sources, seen, exclude)


class Screening:
    """The "screen, then tune" hook of :class:`~gpautotune.strategies.gpr.GPRStrategy`.

    Args:
        threshold: fix parameters whose ST upper bound is below this (0 < threshold < 1).
        n: Saltelli base rows of the screening indices.
        paths: GP posterior paths.
        bootstrap: bootstrap resamples.
    """

    def __init__(
        self, threshold: float, *, n: int = 256, paths: int = 16, bootstrap: int = 50
    ) -> None:
        if not 0.0 < threshold < 1.0:
            raise ConfigError(
                f"screen must be a threshold in (0, 1) on the total Sobol index, got {threshold!r}"
            )
        self.threshold, self.n, self.paths, self.bootstrap = float(threshold), n, paths, bootstrap
        self.decision: ScreenDecision | None = None
        self._reported = False

    def step(self, strategy: GPRStrategy, n: int, ok: Sequence[Trial]) -> list[Proposal]:
        """Screen once (when the initial design is told), then propose as the strategy does."""
        if self.decision is None and len(strategy.trials) >= strategy.n_init:
            self.decision = self._screen(strategy)
        proposals = strategy._model_step(n, ok)
        if self.decision is None:
            return proposals
        info = {"screened": self.decision.fixed}
        if not self._reported and proposals:
            self._reported = True
            info |= {
                "screen_st_high": self.decision.st_high,
                "screen_s": round(self.decision.seconds, 3),
            }
        return [Proposal(p.config, {**p.info, **info}) for p in proposals]

    def _screen(self, strategy: GPRStrategy) -> ScreenDecision:
        t0 = time.perf_counter()
        initial = [t for t in strategy.trials[: strategy.n_init] if t.ok]
        if len(initial) < 2:
            return ScreenDecision({}, {}, self.threshold)
        space = strategy.space
        index = space.to_index([t.config for t in initial])
        values = np.array([t.value for t in initial], dtype=float)
        gp = GPSurrogate(strategy.gp_settings, strategy.gp.d, len(strategy.basis))
        seed = strategy.seed or 0
        try:
            gp.fit(strategy.features(index), values, seed=seed)
            result = surrogate_indices(
                gp,
                strategy.features,
                space,
                n=self.n,
                paths=self.paths,
                bootstrap=self.bootstrap,
                seed=seed,
                mean_function=False,
            )
        except (SurrogateError, RuntimeError) as exc:
            _log.warning("screening skipped: %s", exc)
            return ScreenDecision({}, {}, self.threshold, time.perf_counter() - t0)
        st_high = {
            str(k): round(float(v), 5)
            for k, v in zip(result.table["parameter"], result.table["ST_high"], strict=True)
        }
        best = min(initial, key=lambda t: t.value).config
        fixed = decide(st_high, best, self.threshold)
        if fixed:
            strategy.pool = SubspacePool(space, strategy.pool_settings, strategy.seed, fixed)
        _log.info("screening fixed %d of %d parameters: %s", len(fixed), space.dims, fixed)
        return ScreenDecision(fixed, st_high, self.threshold, time.perf_counter() - t0)
