"""A plain Python function of a configuration, as a problem.

``tune(objective, space=space, ...)`` wraps ``objective`` in a :class:`FunctionProblem`:
the function receives one configuration (a dict of parameter values) and returns the
value to minimise, as a number or as a :class:`~gpautotune.Measurement` (use
``Measurement.failure(Status.RUN_ERROR, "why")`` for a configuration that fails; an
exception it raises is stored as a ``run_error`` too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.measurement import Measurement
from gpautotune.problems._base import Problem
from gpautotune.space import Config, Space

__all__ = ["FunctionProblem", "Objective", "as_problem"]

#: A function of one configuration returning the value to minimise (or a Measurement).
Objective = Callable[[Config], "Measurement | float"]


class FunctionProblem(Problem):
    """``objective(config)`` minimised over ``space``.

    Args:
        objective: the function; it may return a float or a :class:`Measurement`.
        space: the configurations it accepts.
        name: the problem's name in the journal (default: the function's ``__name__``).
        optimum: the known minimum, if any (reports then give slowdowns).

    Raises:
        ConfigError: ``objective`` is not callable or ``space`` is not a :class:`Space`.
    """

    def __init__(
        self,
        objective: Objective,
        space: Space,
        *,
        name: str | None = None,
        optimum: float | None = None,
    ) -> None:
        if not callable(objective):
            raise ConfigError(f"the objective must be callable, got {type(objective).__name__}")
        if not isinstance(space, Space):
            raise ConfigError(
                f"space must be a gpautotune.space.Space, got {type(space).__name__}; build "
                "one from typed parameters, e.g. Space([IntRange('n', 1, 8)])"
            )
        self.objective = objective
        self.space = space
        self.name = name or getattr(objective, "__name__", None) or "function"
        self.optimum = optimum

    def evaluate(self, config: Config) -> Measurement | float:
        return self.objective(dict(config))

    def describe(self) -> dict[str, Any]:
        """The name and the function's qualified name (part of the run key)."""
        where = getattr(self.objective, "__module__", None)
        qualname = getattr(self.objective, "__qualname__", type(self.objective).__name__)
        return {"name": self.name, "function": f"{where}:{qualname}" if where else qualname}


def as_problem(problem: Problem | Objective, space: Space | None) -> Problem:
    """``problem`` itself, or a plain function of a configuration with its ``space``
    wrapped in a :class:`~gpautotune.problems.function.FunctionProblem`.

    Raises:
        ConfigError: a function without a space, or a space given with a Problem.
    """
    if isinstance(problem, Problem):
        if space is not None:
            raise ConfigError("space= is for a plain function; a Problem has its own space")
        return problem
    if not callable(problem):
        raise ConfigError(
            f"tune() needs a Problem or a function of a configuration, got {type(problem).__name__}"
        )
    if space is None:
        raise ConfigError(
            f"tune({getattr(problem, '__name__', 'function')}, ...) needs space=: the "
            "configurations the function accepts (a gpautotune.space.Space)"
        )
    return FunctionProblem(problem, space)
