"""What one evaluation returns: a :class:`Status` and a :class:`Measurement`.

The core types every layer shares (problems produce them, evaluators wrap crashes into
them, trials and the journal store them), kept in a module that depends on nothing else
of the package.
"""

from __future__ import annotations

import math
import numbers
import os
import re
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = ["Status", "Measurement"]

#: The metric naming the exception class of a crashed evaluation (:meth:`Measurement.crash`).
EXCEPTION_METRIC = "exception"


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


#: The statuses of a configuration that could not be measured.
_FAILURES = tuple(s.value for s in Status if s is not Status.OK)


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
            if isinstance(self.value, str | bytes | bool):  # float("2") would take them
                raise ValueError(f"an ok measurement needs a number, got {self.value!r}")
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
        """A configuration that could not be measured, ``status`` saying how.

        Raises:
            ValueError: ``status`` is not a status, or is ``ok`` (a failure needs a
                failure status; :meth:`success` makes an ok measurement).
        """
        if status in _FAILURES:
            return cls(Status(status), None, (), metrics, error)
        ok = "ok; Measurement.success(value) makes an ok measurement"
        raise ValueError(
            f"Measurement.failure needs a failure status ({', '.join(_FAILURES)}), got "
            + (ok if status == Status.OK else repr(status))
        )

    @classmethod
    def of(cls, result: object) -> Measurement:
        """What an objective returned, as a measurement: a :class:`Measurement` as is, a
        finite real number as an ok value, NaN or an infinity as a ``run_error`` (as
        Optuna fails a trial whose objective returns NaN).

        Raises:
            TypeError: anything else (None, a string, a tensor of several values...).
        """
        if isinstance(result, Measurement):
            return result
        if not isinstance(result, numbers.Real) and hasattr(result, "item"):
            try:  # one-element numpy arrays and torch tensors
                result = result.item()
            except (ValueError, RuntimeError, TypeError):
                pass
        if isinstance(result, numbers.Real) and not isinstance(result, bool):
            value = float(result)
            if math.isfinite(value):
                return cls.success(value)
            return cls.failure(Status.RUN_ERROR, f"the objective returned {value}")
        raise TypeError(  # the value on a line of its own: every such crash alike
            f"the objective returned {type(result).__name__}; return a float or a "
            "gpautotune.Measurement (Measurement.failure(...) for a configuration that "
            f"fails)\nit returned {result!r:.60}"
        )

    @classmethod
    def crash(cls, exc: BaseException) -> Measurement:
        """A ``run_error`` for an exception raised by an evaluation: the message and the
        traceback as ``error``, the exception's class name as the ``exception`` metric."""
        text = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=8)}"
        return cls.failure(Status.RUN_ERROR, text, **{EXCEPTION_METRIC: type(exc).__name__})

    @property
    def crash_signature(self) -> str | None:
        """``Type: message`` of an evaluation that raised (:meth:`crash`), else None."""
        if self.ok or EXCEPTION_METRIC not in self.metrics or not self.error:
            return None
        return self.error.splitlines()[0]

    @property
    def crash_site(self) -> str:
        """`` at FILE:LINE in FUNCTION`` of the innermost frame of the traceback in
        ``error`` (empty when there is none)."""
        frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)', self.error or "")
        if not frames:
            return ""
        file, line, function = frames[-1]
        return f" at {os.path.basename(file)}:{line} in {function}"
