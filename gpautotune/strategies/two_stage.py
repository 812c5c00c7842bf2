"""Falch & Elster's two-stage model-based search (seed 001 §5.3)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field, PositiveInt
from scipy.stats import norm

from gpautotune.exceptions import ConfigError
from gpautotune.space import Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies._stepwise import StepwiseStrategy
from gpautotune.strategies._subspace import Subspace

__all__ = ["TwoStage", "TwoStageSettings"]

Model = Literal["mlp", "gp"]


@strategy_settings
class TwoStageSettings(StrategySettings):
    """Options of :class:`TwoStage`.

    Attributes:
        samples: size of the random training sample.
        threshold: the probability ``T`` below which the second stage stops.
        model: ``"mlp"`` (bagged networks) or ``"gp"`` (bagged Gaussian processes).
        ensemble: number of folds and of models.
        hidden: neurons of the hidden layer (``mlp``).
        candidates: sample of the valid set ranked in stage 2 when it cannot be enumerated.
    """

    samples: Annotated[int, Field(ge=3)] = 60
    threshold: Annotated[float, Field(gt=0, lt=1)] = 0.1
    model: Model = "mlp"
    ensemble: Annotated[int, Field(ge=2)] = 11
    hidden: PositiveInt = 50
    candidates: PositiveInt = 20_000


@register("two-stage")
class TwoStage(StepwiseStrategy):
    """Random training sample, performance model, then measure in predicted order.

    Stage 1 measures ``samples`` uniformly random valid configurations and fits a model
    of ``log(value)`` (of the value itself when some values are not positive) on the
    encoded configurations: a bagged ensemble of ``ensemble`` one-hidden-layer sigmoid
    networks, each trained without one of ``ensemble`` folds (seed 001's ANN; scikit-learn
    ``MLPRegressor``), or the same folds of Gaussian processes (``model="gp"``). The
    prediction is the ensemble mean, and the out-of-fold residuals give the error
    variance ``s^2``. Stage 2 goes through the unmeasured valid configurations from the
    lowest predicted value up and measures each while the probability that it beats the
    best value so far, ``q = Phi((log t_min - mu) / s)`` (seed 001 eq. 2, Gaussian
    errors), is at least ``threshold``; every new measurement updates ``t_min`` and the
    running estimate of ``s^2``. The search stops at the first candidate below the
    threshold (or when the budget is spent).

    The options are the fields of :class:`TwoStageSettings`.
    """

    Settings = TwoStageSettings
    options: TwoStageSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._order: list[tuple[np.ndarray, float]] | None = None
        self._errors: list[float] = []
        self._last: tuple[np.ndarray, float] | None = None
        self._log = True
        self._sampled = False
        self.stage = 1

    def _info(self) -> dict[str, Any]:
        return {"stage": self.stage}

    def _step(self) -> np.ndarray | None:
        if not self._sampled:
            self._sampled = True
            return Subspace(self.space).sample(self.options.samples, self.rng, exclude=self.history)
        if self._order is None:
            self.stage = 2
            if not self._train():
                return None
        self._learn_from_last()
        return self._next_candidate()

    # ---------------------------------------------------------------- model
    def _target(self, values: np.ndarray) -> np.ndarray:
        return np.log(values) if self._log else values

    def _train(self) -> bool:
        index, values = self.measured_history()
        if len(values) < 3:
            return False
        self._log = bool(np.all(values > 0))
        X, y = self.space.encode(index), self._target(values)
        folds = np.array_split(self.rng.permutation(len(y)), min(self.options.ensemble, len(y)))
        models, residuals = [], np.empty(len(y))
        for fold in folds:
            train = np.setdiff1d(np.arange(len(y)), fold)
            fitted = self._fit(X[train], y[train])
            residuals[fold] = y[fold] - fitted(X[fold])
            models.append(fitted)
        self._errors = (residuals**2).tolist()
        pool = self._pool()
        if not len(pool):  # every valid configuration measured: nothing to rank
            return False
        mean = np.mean([m(self.space.encode(pool)) for m in models], axis=0)
        order = np.argsort(mean, kind="stable")
        self._order = [(pool[i], float(mean[i])) for i in order]
        return True

    def _fit(self, X: np.ndarray, y: np.ndarray):
        try:
            from sklearn.gaussian_process import GaussianProcessRegressor
            from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel
            from sklearn.neural_network import MLPRegressor
        except ImportError:  # pragma: no cover - depends on the environment
            raise ConfigError(
                "two-stage needs scikit-learn, a dependency of gpautotune: pip install scikit-learn"
            ) from None
        centre, scale = float(y.mean()), float(y.std()) or 1.0
        state = int(self.rng.integers(2**31))
        if self.options.model == "mlp":
            net = MLPRegressor(
                hidden_layer_sizes=(self.options.hidden,),
                activation="logistic",
                solver="lbfgs",
                max_iter=2000,
                random_state=state,
            )
        else:
            kernel = ConstantKernel() * Matern(
                nu=2.5, length_scale=np.ones(X.shape[1])
            ) + WhiteKernel(1e-2)
            net = GaussianProcessRegressor(kernel, normalize_y=False, random_state=state)
        net.fit(X, (y - centre) / scale)
        return lambda Z: net.predict(Z) * scale + centre

    def _pool(self) -> np.ndarray:
        sub = Subspace(self.space)
        pool = sub.enumerate() if sub.enumerable else sub.sample(self.options.candidates, self.rng)
        fresh = np.fromiter(
            (k not in self.history for k in self.keys(pool)), dtype=bool, count=len(pool)
        )
        return pool[fresh]

    # ----------------------------------------------------------- stage two
    def _learn_from_last(self) -> None:
        if self._last is None:
            return
        row, predicted = self._last
        value = self.value(self.keys(row[None, :])[0])
        if value is not None and (value > 0 or not self._log):
            self._errors.append(float((self._target(np.array([value]))[0] - predicted) ** 2))
        self._last = None

    def _next_candidate(self) -> np.ndarray | None:
        _, values = self.measured_history()
        if len(values) == 0 or not self._order:
            return None
        best = float(self._target(values[values > 0] if self._log else values).min())
        sd = math.sqrt(max(float(np.mean(self._errors)), 1e-300))
        while self._order:
            row, predicted = self._order.pop(0)
            if self.keys(row[None, :])[0] in self.history:
                continue
            if norm.cdf((best - predicted) / sd) < self.options.threshold:
                return None
            self._last = (row, predicted)
            return row[None, :]
        return None
