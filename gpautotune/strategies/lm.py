"""Iterative linear model on random samples (LM), seed 000 §5-6."""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import NonNegativeInt, PlainValidator, PositiveInt, model_validator

from gpautotune.space import Space
from gpautotune.strategies._fixing import FactorFixing, FactorFixingSettings
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import strategy_settings
from gpautotune.surrogate import Basis

__all__ = ["LinearModelSearch", "LMSettings"]


def _fix_rule(value: Any) -> int | str:
    if isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool) and value >= 0
    ):
        return value
    raise ValueError("a fix entry is a count >= 0 or a formula")


@strategy_settings
class LMSettings(FactorFixingSettings):
    """Options of :class:`LinearModelSearch` (and, with ``quantile``, of qr).

    Attributes:
        formula: the model for integer ``fix`` entries (see ``build_basis``).
        samples: points measured at each step.
        fix: per step, how many factors to fix, or the formula whose factors to fix.
        enumerate_last: after the schedule, measure the whole slice when it has at most
            this many unmeasured valid configurations.
        candidates: sample size for predictions in slices too large to enumerate.
    """

    samples: tuple[PositiveInt, ...] = (50, 40, 20, 5)
    fix: tuple[Annotated[int | str, PlainValidator(_fix_rule)], ...] = (2, 1, 1, 1)
    enumerate_last: NonNegativeInt = 16

    @model_validator(mode="after")
    def _one_rule_per_step(self) -> LMSettings:
        if not self.samples or len(self.samples) != len(self.fix):
            raise ValueError(
                "samples and fix need the same, non-zero length; "
                f"got {list(self.samples)} and {list(self.fix)}"
            )
        return self


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

    The options are the fields of :class:`LMSettings`.
    """

    Settings = LMSettings
    options: LMSettings
    #: Regression quantile (None: least squares); set by the qr subclass.
    quantile: float | None = None

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.fix_rules: list[int | Basis] = [
            self._basis(r, f"fix.{i}") if isinstance(r, str) else r
            for i, r in enumerate(self.options.fix)
        ]
        self._measuring = False

    def settings(self) -> dict[str, Any]:
        return {**self.options.as_dict(), "quantile": self.quantile}

    def _step(self) -> np.ndarray | None:
        if self.phase == "final":
            return None
        if self._measuring:
            self._measuring = False
            self._analyse(self.fix_rules[min(self.step, len(self.fix_rules) - 1)])
            self.step += 1
        return self._design()

    def _design(self) -> np.ndarray | None:
        samples = self.options.samples
        size = samples[min(self.step, len(samples) - 1)]
        fresh = self.unexplored()
        past_schedule = self.step >= len(samples)
        if fresh is not None and (
            len(fresh) <= size or (past_schedule and len(fresh) <= self.options.enumerate_last)
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
