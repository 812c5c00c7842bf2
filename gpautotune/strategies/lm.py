"""Iterative linear model on random samples (LM), seed 000 §5-6."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._fixing import FactorFixing
from gpautotune.strategies._registry import register
from gpautotune.surrogate import Basis, build_basis

__all__ = ["LinearModelSearch"]


@register("lm")
class LinearModelSearch(FactorFixing):
    """Sample, fit a least-squares model, fix factors, narrow; repeat (LM).

    Step ``k`` measures ``samples[k]`` uniformly random valid configurations of the
    current slice (none measured before), fits a model to every measurement in the slice
    and fixes factors to the levels of the configuration the model predicts best among
    the slice's valid ones:

    * ``fix[k]`` an integer ``m``: the model is ``formula`` (its terms whose parameters
      are free) and the ``m`` factors with the smallest p-values (joint F-test of each
      factor's terms) are fixed;
    * ``fix[k]`` a formula (``"vector_length + lws_y"``): that model is fitted and all
      its free parameters are fixed — the analyst's choice of seed 000.

    Past the schedule the last entry repeats. When the slice has no more unmeasured
    configurations than the next sample size — or, once the schedule is done, at most
    ``enumerate_last`` — they are all measured and the search stops. The defaults
    generalise seed 000's Laplacian run (50 points, fix vector_length and lws_y; +40, fix
    y_component_number; +20, fix elements_number; +5, fix threads_number; measure the 4
    left): pass ``fix=("vector_length + lws_y", "y_component_number", "elements_number",
    "threads_number + 1/threads_number")`` to replay it exactly.

    Args:
        formula: the model for integer ``fix`` entries (see ``build_basis``).
        samples: points measured at each step.
        fix: per step, how many factors to fix, or the formula whose factors to fix.
        enumerate_last: after the schedule, measure the whole slice when it has at most
            this many unmeasured valid configurations.
        candidates: sample size for predictions in slices too large to enumerate.
    """

    #: Regression quantile (None: least squares); set by the qr subclass.
    quantile: float | None = None

    def __init__(
        self,
        space: Space,
        *,
        seed: int | None = None,
        formula: str = "linear",
        samples: Sequence[int] = (50, 40, 20, 5),
        fix: Sequence[int | str] = (2, 1, 1, 1),
        enumerate_last: int = 16,
        candidates: int = 10_000,
    ) -> None:
        super().__init__(space, seed=seed, formula=formula, candidates=candidates)
        samples, fix = list(samples), list(fix)
        if not samples or len(samples) != len(fix):
            raise ConfigError(
                f"{self.name}: samples and fix need the same, non-zero length; got {samples} and {fix}"
            )
        if any(int(s) < 1 for s in samples) or enumerate_last < 0:
            raise ConfigError(
                f"{self.name}: samples must be >= 1 and enumerate_last >= 0; got {samples}, {enumerate_last}"
            )
        self.samples = [int(s) for s in samples]
        self.fix_rules: list[int | Basis] = [self._rule(r) for r in fix]
        self.fix_spec = [r if isinstance(r, str) else int(r) for r in fix]
        self.enumerate_last = int(enumerate_last)
        self._measuring = False

    def _rule(self, rule: int | str) -> int | Basis:
        if isinstance(rule, str):
            return build_basis(rule, self.space)
        if isinstance(rule, bool) or int(rule) < 0:
            raise ConfigError(
                f"{self.name}: a fix entry is a count >= 0 or a formula, got {rule!r}"
            )
        return int(rule)

    def settings(self) -> dict[str, Any]:
        return {
            "formula": self.formula,
            "samples": self.samples,
            "fix": self.fix_spec,
            "enumerate_last": self.enumerate_last,
            "candidates": self.candidates,
            "quantile": self.quantile,
        }

    def _step(self) -> np.ndarray | None:
        if self.phase == "final":
            return None
        if self._measuring:
            self._measuring = False
            self._analyse(self.fix_rules[min(self.step, len(self.fix_rules) - 1)])
            self.step += 1
        return self._design()

    def _design(self) -> np.ndarray | None:
        size = self.samples[min(self.step, len(self.samples) - 1)]
        fresh = self.unexplored()
        past_schedule = self.step >= len(self.samples)
        if fresh is not None and (
            len(fresh) <= size or (past_schedule and len(fresh) <= self.enumerate_last)
        ):
            self.phase = "final"
            return fresh
        rows = self.subspace.sample(size, self.rng, exclude=self.history)
        if len(rows) == 0:
            return None
        self._measuring = True
        return rows

    def _analyse(self, rule: int | Basis) -> None:
        basis = self.free_basis(rule if isinstance(rule, Basis) else None)
        if len(basis) == 0 or rule == 0:
            return
        model = self.fit(basis, quantile=self.quantile)
        if model is None:
            return
        if isinstance(rule, Basis):
            names = [n for n in basis.parameters if any(j in model.kept for j in basis.terms_of(n))]
        else:
            names = [n for n in model.ranked() if np.isfinite(model.pvalues[n])][:rule]
        best = self.predicted_best(model) if names else None
        if best is not None:
            self.fix(names, best, model, len(self.slice_data()[1]))
