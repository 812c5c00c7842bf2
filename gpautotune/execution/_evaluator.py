"""Evaluators: how the tuner calls a problem. Exceptions become ``run_error`` statuses.

Evaluators sit below the problems: they know a problem only as something with
``evaluate(config) -> Measurement`` (:class:`Evaluable`), so that every problem can name
its default evaluator without a cycle.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Protocol

from gpautotune.measurement import Measurement
from gpautotune.space import Config

__all__ = ["Evaluable", "Evaluation", "Evaluator", "InProcessEvaluator"]


class Evaluable(Protocol):
    """What an evaluator calls: a :class:`~gpautotune.problems.Problem`, in practice."""

    def evaluate(self, config: Config) -> Measurement | float:
        """Measure one configuration (a number is an ok value)."""
        ...


@dataclass(frozen=True)
class Evaluation:
    """A measurement with the wall time around it."""

    measurement: Measurement
    started_at: float
    duration_s: float


class Evaluator(ABC):
    """Runs ``problem.evaluate``; never raises for what the problem does.

    ``evaluate`` may return a :class:`Measurement` or a plain number
    (:meth:`Measurement.of`); an exception becomes a ``run_error`` naming it
    (:meth:`Measurement.crash`).
    """

    def __call__(self, problem: Evaluable, config: Config) -> Evaluation:
        start, t0 = time.time(), time.perf_counter()
        try:
            measurement = Measurement.of(self._evaluate(problem, config))
        except Exception as exc:  # noqa: BLE001 - the evaluation boundary turns crashes into statuses
            measurement = Measurement.crash(exc)
        return Evaluation(measurement, start, time.perf_counter() - t0)

    @abstractmethod
    def _evaluate(self, problem: Evaluable, config: Config) -> Measurement | float: ...

    def check(self, problem: Evaluable) -> None:
        """Refuse a problem this evaluator can never evaluate, before a run opens for it
        (else each trial would be stored as a failure of the problem).

        Raises:
            ConfigError: saying why and what to do.
        """

    def close(self) -> None:
        """Release workers or devices."""


class InProcessEvaluator(Evaluator):
    """Call the problem in this process."""

    def _evaluate(self, problem: Evaluable, config: Config) -> Measurement | float:
        return problem.evaluate(config)
