"""What the OpenCL and C kernel problems share: validation, the objective, the result."""

from __future__ import annotations

import math
import pickle
import warnings
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError, SpaceError
from gpautotune.execution import Evaluator, InProcessEvaluator, IsolatedEvaluator
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.problems.kernel._answer import compare_outputs
from gpautotune.problems.kernel._spec import KernelSpec
from gpautotune.space import Config
from gpautotune.storage import metric_unit

__all__ = ["KernelProblem"]


class KernelProblem(Problem):
    """A user's kernel: a :class:`KernelSpec` measured by a backend (OpenCL or C).

    Subclasses implement :meth:`_measure`, which gets a valid configuration and returns
    a measurement made by :meth:`_checked` and :meth:`_timed`. The objective's unit is
    ``s`` for ``time``, else the one its metric's name states (``GB/s``); a metric with
    ``higher_is_better`` is maximised. Samples are kernel times in seconds.
    """

    measures_hardware = True
    samples_unit = "s"

    def __init__(
        self, spec: KernelSpec, *, timeout_s: float, startup_timeout_s: float = 300.0
    ) -> None:
        if not (0 < timeout_s < math.inf and 0 < startup_timeout_s < math.inf):
            raise ConfigError(
                f"timeouts must be positive and finite, got timeout_s={timeout_s}, "
                f"startup_timeout_s={startup_timeout_s}"
            )
        self.spec, self.space, self.timeout_s = spec, spec.space, float(timeout_s)
        self.startup_timeout_s = float(startup_timeout_s)
        name = spec.objective.name
        self.objective_unit = "s" if name == "time" else metric_unit(name)
        self.direction = "max" if spec.objective.higher_is_better else "min"

    @property
    def report_metrics(self) -> tuple[str, ...]:
        """Metrics the command line prints for the best configuration."""
        return ("bound_fraction", "copy_bandwidth_Bps", *self.spec.objective.metrics)

    def evaluate(self, config: Config) -> Measurement:
        try:
            config = self.space.validate(config)
        except SpaceError as exc:
            return Measurement.failure(Status.INVALID, str(exc))
        try:
            return self._measure(config)
        except ConfigError as exc:  # an expression that has no value for this configuration
            return Measurement.failure(Status.INVALID, str(exc))

    @abstractmethod
    def _measure(self, config: Config) -> Measurement:
        """Build, check and time a valid configuration."""

    def check(self) -> None:
        """Make the arguments and the answer on the host, as the first evaluation would,
        so that a mistake in them is one error before tuning, not a failure per trial.

        Raises:
            ConfigError: an argument or the answer cannot be made (the message names it).
        """
        self._host_values()

    def _host_values(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The argument values by name and the expected outputs, checked.

        Raises:
            ConfigError: an argument cannot be made or is an empty array, the answer
                cannot be computed, or it has another number of elements than its output.
        """
        host = self.spec.materialise()
        for i, (name, value) in enumerate(host.items()):
            if isinstance(value, np.ndarray) and value.size == 0:
                raise ConfigError(
                    f"arguments.{i} ({name}): an empty array (shape {value.shape}); a kernel "
                    "argument needs at least one element"
                )
        try:
            expected = self.spec.answer.expected(host, self.spec.sizes)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - the user's answer function or arrays
            raise ConfigError(
                f"answer: the expected outputs cannot be computed: {type(exc).__name__}: {exc}"
            ) from exc
        for name, ref in expected.items():
            size, wanted = np.asarray(ref).size, np.asarray(host[name]).size
            if size != wanted:
                raise ConfigError(
                    f"answer.{name}: {size} elements, but argument {name} has {wanted}"
                )
        return host, expected

    def _checked(
        self, outputs: Mapping[str, Any], expected: Mapping[str, Any], meta: dict[str, Any]
    ) -> Measurement | None:
        """A ``wrong_result`` measurement when the outputs differ from the answer, else
        ``None`` (``meta`` gets the largest error)."""
        if not expected:
            return None
        check = compare_outputs(outputs, expected, atol=self.spec.atol, rtol=self.spec.rtol)
        meta["max_abs_error"] = check.max_abs_error
        if check.mismatch is None:
            return None
        return Measurement.failure(Status.WRONG_RESULT, check.mismatch, **meta)

    def _timed(self, config: Config, times: Sequence[float], meta: dict[str, Any]) -> Measurement:
        """The measurement of a kernel that ran ``times`` (seconds): the fastest counts."""
        best = min(times)
        metrics = self.spec.objective.evaluate(best, self.spec.scope(config))
        value = self.spec.objective.value(best, metrics)
        meta.update(time_s=best, **metrics)
        if value is None:
            return Measurement.failure(
                Status.RUN_ERROR,
                f"objective {self.spec.objective.name} is {metrics[self.spec.objective.name]!r}",
                times_s=list(times),
                **meta,
            )
        return Measurement.success(value, times, **meta)

    def default_evaluator(self) -> Evaluator:
        """A worker process with this problem's timeout (a hung kernel costs one timeout);
        in this process, with a warning naming the risks, when the problem cannot be
        pickled (e.g. a lambda as answer or restriction)."""
        try:
            pickle.dumps(self)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means the same
            warnings.warn(
                f"{self.name} runs in this process: it cannot be sent to a worker ({exc}). "
                "A kernel that crashes then ends the whole run, and one that hangs cannot be "
                f"stopped: timeout_s ({self.timeout_s:g} s) does not apply and Ctrl-C does not "
                "interrupt a running kernel. Define answer functions and restrictions at "
                "module level (not lambdas or closures) to run in a worker with timeouts",
                stacklevel=2,
            )
            return InProcessEvaluator()
        return IsolatedEvaluator(timeout_s=self.timeout_s, startup_timeout_s=self.startup_timeout_s)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self.spec.describe()}
