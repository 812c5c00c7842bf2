"""The iterative scheme shared by lm, qr and dlmt: measure, fit, fix factors, narrow.

Seed 000 §5 and seed 003 §11.3: measure a set of configurations of the current slice of
the space, fit a linear model of the measurements, fix the chosen factors to the levels
of the configuration the model predicts best, and go on in the narrower slice with the
factors that remain free. The prediction scores the model over every valid configuration
of the slice when it can be enumerated, else over a large uniform sample of it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import PositiveInt

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace
from gpautotune.surrogate import Basis, LinearFit, Transform, build_basis, fit_linear

__all__ = ["FactorFixing", "FactorFixingSettings", "Decision"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decision:
    """What one step of the scheme decided (kept in :attr:`FactorFixing.decisions`).

    Attributes:
        step: the step number (0-based).
        points: successful measurements the model was fitted on.
        terms: the model's terms.
        pvalues: per free parameter, the p-value of its joint test.
        fixed: parameter -> value fixed at this step.
        boxcox_lambda: the Box-Cox exponent applied, or None.
    """

    step: int
    points: int
    terms: list[str]
    pvalues: dict[str, float]
    fixed: dict[str, Any] = field(default_factory=dict)
    boxcox_lambda: float | None = None


@strategy_settings
class FactorFixingSettings(StrategySettings):
    """Options shared by the factor-fixing strategies.

    Attributes:
        formula: the model, a formula over parameter names (see
            :func:`gpautotune.surrogate.build_basis`); each step uses its terms whose
            parameters are still free.
        candidates: size of the uniform sample of a slice used for predictions (and
            designs) when the slice is too large to enumerate.
    """

    formula: str = "linear"
    candidates: PositiveInt = 10_000


class FactorFixing(StepwiseStrategy):
    """Base of the model-based factor-fixing strategies (options: :attr:`Settings`)."""

    Settings = FactorFixingSettings
    options: FactorFixingSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.basis = self._basis(self.options.formula, "formula")
        self.subspace = Subspace(space)
        self.step = 0
        self.phase = "design"
        self.decisions: list[Decision] = []

    def _basis(self, formula: str, option: str) -> Basis:
        """The model of ``formula`` on the space; its error names the strategy's option.

        Raises:
            ConfigError: ``strategy 'NAME': OPTION: model formula ...``.
        """
        try:
            return build_basis(formula, self.space)
        except ConfigError as exc:
            raise ConfigError(f"strategy {self.name!r}: {option}: {exc}") from None

    def _info(self) -> dict[str, Any]:
        """The step, its phase and the factors fixed so far (name -> value: the slice the
        proposal lies in, from which reports take the seeds' "best of the final slice")."""
        return {"step": self.step, "phase": self.phase, "fixed": self.fixed_values()}

    def fixed_values(self) -> dict[str, Any]:
        """The fixed factors of the current slice, name -> value (plain Python values)."""
        out = {}
        for j, level in self.subspace.fixed.items():
            value = self.space.parameters[j].values_at(np.array([int(level)]))[0]
            out[self.space.names[j]] = value.item() if hasattr(value, "item") else value
        return out

    # ---------------------------------------------------------------- model
    def free_basis(self, basis: Basis | None = None) -> Basis:
        """``basis`` (by default the strategy's) restricted to the free parameters."""
        return (basis or self.basis).restrict(self.subspace.free_names)

    def slice_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Successful measurements (of the history) that lie in the current slice."""
        index, values = self.measured_history()
        inside = self.subspace.contains(index) if len(index) else np.zeros(0, dtype=bool)
        return index[inside], values[inside]

    def fit(
        self, basis: Basis, *, quantile: float | None = None, transform: Transform = "none"
    ) -> LinearFit | None:
        """Fit ``basis`` to the slice's measurements (None with fewer than two of them)."""
        index, values = self.slice_data()
        if len(values) < 2:
            return None
        return fit_linear(
            basis, basis(self.space.columns(index)), values, quantile=quantile, transform=transform
        )

    def predicted_best(self, model: LinearFit) -> np.ndarray | None:
        """The valid configuration of the slice with the lowest prediction."""
        pool = self.subspace.candidates(self.options.candidates, self.rng)
        if len(pool) == 0:
            return None
        scores = model.predict(model.basis(self.space.columns(pool)))
        return pool[int(np.argmin(scores))]

    def fix(self, names: list[str], best: np.ndarray, model: LinearFit, points: int) -> None:
        """Fix ``names`` to their levels in ``best`` and record the decision."""
        positions = {self.space.names.index(n): best[self.space.names.index(n)] for n in names}
        config = self.space.to_configs(best[None, :])[0]
        fixed = {n: config[n] for n in names}
        self.decisions.append(
            Decision(
                self.step,
                points,
                model.basis.term_names,
                dict(model.pvalues),
                fixed,
                model.boxcox_lambda,
            )
        )
        _log.info("%s step %d: fixed %s (p-values %s)", self.name, self.step, fixed, model.pvalues)
        self.subspace = self.subspace.fix(positions)

    def unexplored(self) -> np.ndarray | None:
        """Valid configurations of the slice not generated yet (None if not enumerable)."""
        if not self.subspace.enumerable:
            return None
        rows = self.subspace.enumerate()
        if len(rows) == 0:
            return rows
        fresh = np.fromiter(
            (k not in self.history for k in self.keys(rows)), dtype=bool, count=len(rows)
        )
        return rows[fresh]
