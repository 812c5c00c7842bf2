"""The problem contract: a space plus ``evaluate(config) -> Measurement``.

A problem never raises for a bad configuration: it returns a failed
:class:`Measurement` whose :class:`Status` says why.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Literal

from gpautotune.measurement import Measurement, Status
from gpautotune.space import Config, Space

if TYPE_CHECKING:
    from gpautotune.execution import Evaluator

#: Measurement and Status live in gpautotune.measurement; re-exported for problem modules.
__all__ = ["Problem", "Measurement", "Status"]


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
    #: Names of measurement metrics worth showing with the best configuration (the
    #: command line prints those the best measurement has).
    report_metrics: tuple[str, ...] = ()
    #: The objective's unit (``"s"``, ``"ms"``, ``"GB/s"``; ``""`` where unknown): of the
    #: metric ``describe()`` names as ``objective`` where it names one, else of the value.
    #: Stored with each run (outside its key) and written by the T4 export.
    objective_unit: str = ""
    #: ``"max"`` where a higher objective is better (a throughput: the value the tuner
    #: minimises is then its reciprocal, the metric keeps the objective), else ``"min"``.
    direction: Literal["min", "max"] = "min"
    #: The unit of each measurement's ``samples`` (T4's ``times.runtimes``; ``""``: unknown).
    samples_unit: str = ""

    @abstractmethod
    def evaluate(self, config: Config) -> Measurement | float:
        """Measure one configuration; never raise for a bad configuration.

        Return a :class:`Measurement`, or a plain number for an ok value. Report a
        configuration that fails with ``Measurement.failure(Status.RUN_ERROR, "why")``
        (or another :class:`Status`): it is stored, counted in the budget and never
        proposed again. An exception escaping ``evaluate`` is stored as a ``run_error``
        too, but the tuner stops when the first evaluations all raise the same one (a
        bug, not a bad configuration)."""

    def describe(self) -> dict[str, Any]:
        """Settings that identify this problem (stored with the run, part of its key)."""
        return {"name": self.name}

    def check(self) -> None:
        """Raise a :class:`~gpautotune.exceptions.GPAutotuneError` when no configuration
        can be measured on this machine (a compiler that rejects its flags, a reference
        program that does not build); :func:`~gpautotune.tuner.tune` calls it before the
        first evaluation, so that a broken set-up is one error, not a budget of failures."""

    def data_digest(self) -> str | None:
        """A digest of the data the problem answers from (a replayed table), or None.

        A run stores it beside its key and refuses to resume on another one, so that the
        values of one run never come from two versions of a table.
        """
        return None

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


def in_family(problem: str, name: str) -> bool:
    """Whether the problem called ``problem`` is ``name`` or of the family ``name``
    (``gemm`` holds ``gemm/RTX_3090``): how ``--problem`` selects."""
    return problem == name or problem.startswith(f"{name}/")
