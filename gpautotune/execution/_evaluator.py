"""Evaluators: how the tuner calls a problem. Exceptions become ``run_error`` statuses.

Evaluators sit below the problems: they know a problem only as something with
``evaluate(config) -> Measurement`` (:class:`Evaluable`), so that every problem can name
its default evaluator without a cycle.
"""

from __future__ import annotations

import time
import traceback
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

from gpautotune.measurement import Measurement, Status
from gpautotune.space import Config

__all__ = ["Evaluable", "Evaluation", "Evaluator", "InProcessEvaluator"]


class Evaluable(Protocol):
    """What an evaluator calls: a :class:`~gpautotune.problems.Problem`, in practice."""

    def evaluate(self, config: Config) -> Measurement:
        """Measure one configuration."""
        ...


@dataclass(frozen=True)
class Evaluation:
    """A measurement with the wall time around it."""

    measurement: Measurement
    started_at: float
    duration_s: float


class Evaluator(ABC):
    """Runs ``problem.evaluate``; never raises for what the problem does."""

    def __call__(self, problem: Evaluable, config: Config) -> Evaluation:
        start, t0 = time.time(), time.perf_counter()
        try:
            measurement = self._evaluate(problem, config)
        except Exception as exc:  # noqa: BLE001 - the evaluation boundary turns crashes into statuses
            tb = traceback.format_exc(limit=8)
            measurement = Measurement.failure(
                Status.RUN_ERROR, f"{type(exc).__name__}: {exc}\n{tb}"
            )
        return Evaluation(measurement, start, time.perf_counter() - t0)

    @abstractmethod
    def _evaluate(self, problem: Evaluable, config: Config) -> Measurement: ...

    def close(self) -> None:
        """Release workers or devices."""


class InProcessEvaluator(Evaluator):
    """Call the problem in this process."""

    def _evaluate(self, problem: Evaluable, config: Config) -> Measurement:
        result = problem.evaluate(config)
        if not isinstance(result, Measurement):
            raise TypeError(
                f"{type(problem).__name__}.evaluate returned {type(result).__name__}, not a Measurement"
            )
        return result
