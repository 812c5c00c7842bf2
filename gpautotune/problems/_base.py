"""The problem contract: a space plus ``evaluate(config) -> Measurement``.

A problem never raises for a bad configuration: it returns a failed
:class:`Measurement` whose :class:`Status` says why.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from gpautotune.space import Config, Space

if TYPE_CHECKING:
    from gpautotune.execution import Evaluator

__all__ = ["Status", "Measurement", "Problem"]


class Status(str, Enum):
    """Outcome of one evaluation."""

    OK = "ok"
    INVALID = "invalid"
    BUILD_ERROR = "build_error"
    RUN_ERROR = "run_error"
    WRONG_RESULT = "wrong_result"
    TIMEOUT = "timeout"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Measurement:
    """What one evaluation returned.

    Attributes:
        status: the outcome; only ``ok`` measurements carry a ``value``.
        value: the objective (minimised), ``None`` unless ``status`` is ok.
        samples: raw repeated measurements behind ``value`` (e.g. run times).
        metrics: extra named results (build time, device name, accuracy, ...).
        error: a message (build log, traceback) for failures.
    """

    status: Status
    value: float | None = None
    samples: tuple[float, ...] = ()
    metrics: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", Status(self.status))
        if self.status is Status.OK:
            if self.value is None or not math.isfinite(float(self.value)):
                raise ValueError(f"an ok measurement needs a finite value, got {self.value!r}")
            object.__setattr__(self, "value", float(self.value))
        elif self.value is not None:
            raise ValueError(
                f"a {self.status.value} measurement carries no value, got {self.value!r}"
            )
        object.__setattr__(self, "samples", tuple(float(s) for s in self.samples))

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @classmethod
    def success(cls, value: float, samples: Sequence[float] = (), **metrics: Any) -> Measurement:
        return cls(Status.OK, value, tuple(samples), metrics)

    @classmethod
    def failure(cls, status: Status | str, error: str | None = None, **metrics: Any) -> Measurement:
        return cls(Status(status), None, (), metrics, error)


class Problem(ABC):
    """Something to tune: a :class:`Space` and an objective to minimise.

    Subclasses set :attr:`space` and implement :meth:`evaluate`. :attr:`optimum` is the
    known global optimum where there is one (replayed tables, synthetic functions), so
    that reports can give slowdowns.
    """

    name: str = "problem"
    space: Space
    optimum: float | None = None
    #: True when evaluations time real hardware (one at a time per device in comparisons).
    measures_hardware: bool = False

    @abstractmethod
    def evaluate(self, config: Config) -> Measurement:
        """Measure one configuration; never raise for a bad configuration."""

    def describe(self) -> dict[str, Any]:
        """Settings that identify this problem (stored with the run, part of its key)."""
        return {"name": self.name}

    def best_known(self) -> Config | None:
        """The configuration of :attr:`optimum`, when known."""
        return None

    def baseline(self) -> Config | None:
        """The untuned reference configuration (naive kernel, untransformed loops), if any;
        reports give speedups over it."""
        return None

    def default_evaluator(self) -> Evaluator:
        """How the tuner evaluates this problem when no evaluator is given (in process by
        default; problems that run real kernels isolate them in a worker process)."""
        from gpautotune.execution import InProcessEvaluator

        return InProcessEvaluator()
