"""Paced problems: a replay whose evaluations take time, like real measurements.

A replayed table answers at once, so it cannot show what parallel evaluation buys. A
:class:`PacedProblem` wraps a problem whose values are times (a replay of recorded kernel
times) and sleeps, at each evaluation, for a time proportional to the value it returns:
``scale * value`` seconds, at most ``max_s`` (a tuner's timeout), ``failure_s`` for a
failed evaluation. Sleeping takes no CPU, so many workers can be simulated on few cores::

    problem: {name: paced, problem: {name: laplacian-replay}, optimum_s: 0.5, max_s: 5}
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Annotated, Any

from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement
from gpautotune.problems._base import Problem
from gpautotune.problems.input_files import InputFile
from gpautotune.space import Config

__all__ = ["PacedProblem", "paced_problem"]


class PacedProblem(Problem):
    """``problem``, with each evaluation sleeping ``min(scale * value, max_s)`` seconds.

    Args:
        problem: the problem replayed (its values are times).
        scale: seconds of sleep per unit of value.
        max_s: the longest sleep (slow configurations stop there, like at a timeout).
        failure_s: the sleep of a failed evaluation.
    """

    def __init__(self, problem: Problem, *, scale: float, max_s: float, failure_s: float) -> None:
        if not scale > 0 or not max_s > 0 or failure_s < 0:
            raise ConfigError(
                f"paced: scale and max_s must be > 0 and failure_s >= 0, got scale={scale}, "
                f"max_s={max_s}, failure_s={failure_s}"
            )
        self.problem = problem
        self.scale, self.max_s, self.failure_s = float(scale), float(max_s), float(failure_s)
        self.space = problem.space
        self.optimum = problem.optimum
        self.name = f"{problem.name}-paced"
        self.objective_unit, self.direction = problem.objective_unit, problem.direction
        self.samples_unit = problem.samples_unit

    def seconds(self, measurement: Measurement) -> float:
        """How long an evaluation that returned ``measurement`` takes."""
        if not measurement.ok:
            return self.failure_s
        return min(self.scale * float(measurement.value), self.max_s)

    def evaluate(self, config: Config) -> Measurement:
        measurement = self.problem.evaluate(config)
        time.sleep(self.seconds(measurement))
        return measurement

    def best_known(self) -> Config | None:
        return self.problem.best_known()

    def data_digest(self) -> str | None:
        """The replayed problem's: a paced replay answers from the same table."""
        return self.problem.data_digest()

    def describe(self) -> dict[str, Any]:
        pace = {"scale": self.scale, "max_s": self.max_s, "failure_s": self.failure_s}
        return {**self.problem.describe(), "name": self.name, "paced": pace}


def paced_problem(
    problem: Annotated[Mapping[str, Any], InputFile(section=True)],
    optimum_s: float = 0.5,
    max_s: float = 5.0,
    failure_s: float | None = None,
) -> PacedProblem:
    """The problem a section names (``{name: ..., <options>}``), paced so that its known
    optimum takes ``optimum_s`` seconds and every other configuration proportionally
    longer, up to ``max_s``; a failed evaluation takes ``failure_s`` (default
    ``optimum_s``).

    Raises:
        ConfigError: the section names no problem, or a problem with no known optimum.
    """
    from gpautotune.problems._registry import make_problem

    options = dict(problem)
    name = options.pop("name", None)
    if not isinstance(name, str):
        raise ConfigError(
            f"paced: problem needs a name, e.g. {{name: laplacian-replay}}; got {problem}"
        )
    inner = make_problem(name, **options)
    if not inner.optimum or inner.optimum <= 0:
        raise ConfigError(
            f"paced: problem {name!r} has no known positive optimum to set the pace "
            "(pace a replay of recorded times)"
        )
    return PacedProblem(
        inner,
        scale=optimum_s / inner.optimum,
        max_s=max_s,
        failure_s=optimum_s if failure_s is None else failure_s,
    )
