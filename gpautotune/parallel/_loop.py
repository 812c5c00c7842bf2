"""The asynchronous tuning loop: up to N evaluations in flight, one ask per completion.

The loop keeps every slot of its :class:`Workers` busy. At the start it asks for one
configuration per slot; whenever evaluations finish, it commits their trials (journal
first, then the strategy) and asks for as many configurations as slots came free, the
strategy being told which configurations are still in flight (``pending``: GPR
conditions on them, every strategy excludes them). Each configuration is recorded in the
journal as running before a worker gets it, so a run killed at any moment is resumed
with exactly its in-flight evaluations measured again (:class:`~gpautotune.tuner.TuningRun`
hands them out first). The budget counts evaluations in flight.

With one slot the loop is the sequential one: ask one, measure it, tell it.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpautotune.execution import Evaluation
from gpautotune.space import Config
from gpautotune.trial import Trial

if TYPE_CHECKING:  # the tuner layer sits above this one; the loop only drives its runs
    from gpautotune.tuner import TuningRun

__all__ = ["Finished", "Workers", "run_parallel"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Finished:
    """One evaluation that finished.

    Attributes:
        ticket: the number :meth:`Workers.submit` was given.
        evaluation: the measurement and its timing.
        worker: who measured it (a Dask worker's address), if known.
    """

    ticket: int
    evaluation: Evaluation
    worker: str | None = None


class Workers(Protocol):
    """Where evaluations run: Dask workers (:class:`~gpautotune.parallel.DaskWorkers`) or
    simulated ones (:class:`~gpautotune.parallel.SimulatedWorkers`)."""

    def slots(self) -> int:
        """How many evaluations may run at once now (at least 1)."""
        ...

    def submit(self, ticket: int, config: Config) -> None:
        """Start evaluating ``config``; ``ticket`` identifies it in :meth:`wait`."""
        ...

    def wait(self) -> list[Finished]:
        """Block until at least one submitted evaluation finished; return every finished
        one not returned before, in submission order."""
        ...

    def close(self) -> None:
        """Stop what is still running and release the workers."""
        ...


def run_parallel(
    run: TuningRun,
    workers: Workers,
    callback: Callable[[Trial, Any], None] | None = None,
) -> None:
    """Tune ``run`` on ``workers`` until its budget is spent or its strategy has nothing
    more to propose.

    ``callback(trial, run)`` is called after each committed trial. The workers are not
    closed here.
    """
    in_flight: dict[int, Config] = {}
    tickets = itertools.count()
    while True:
        free = workers.slots() - len(in_flight)
        if free > 0:
            for config in run.ask(free, record_running=True):
                ticket = next(tickets)
                workers.submit(ticket, config)
                in_flight[ticket] = config
        if not in_flight:
            break
        for done in workers.wait():
            config = in_flight.pop(done.ticket)
            ev = done.evaluation
            trial = run.tell(
                config,
                ev.measurement,
                started_at=ev.started_at,
                duration_s=ev.duration_s,
                info={"worker": done.worker} if done.worker else None,
            )
            if callback is not None:
                callback(trial, run)
    if run.remaining and run.set_aside_because is None:  # a stop says why itself
        _log.info("the strategy has nothing more to propose")
