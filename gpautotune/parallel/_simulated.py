"""Workers in simulated time: what N asynchronous workers would do, deterministically.

Each evaluation runs at once in this process, but its result is released only when a
virtual clock reaches its finish time, ``start + duration(measurement)``: with the
durations real workers would take (a paced replay's sleeps), the completion order is
the one real workers give, while the tuner's own time (the strategy's asks) costs
nothing on the clock. Sample-efficiency benchmarks use it to run many seeds cheaply.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from gpautotune.execution import Evaluable, Evaluation, InProcessEvaluator
from gpautotune.measurement import Measurement
from gpautotune.parallel._loop import Finished
from gpautotune.space import Config

__all__ = ["SimulatedWorkers"]


class SimulatedWorkers:
    """``workers`` simulated workers (a :class:`~gpautotune.parallel.Workers`).

    Args:
        problem: what to evaluate (in this process, without sleeping).
        workers: evaluations at once.
        duration: seconds an evaluation that returned a measurement takes.

    Attributes:
        clock: the simulated time (seconds since the first submission).
        busy_s: simulated seconds the workers spent evaluating, summed over workers.
    """

    def __init__(
        self,
        problem: Evaluable,
        workers: int,
        duration: Callable[[Measurement], float],
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.problem, self.workers, self.duration = problem, workers, duration
        self.clock = 0.0
        self.busy_s = 0.0
        self._evaluator = InProcessEvaluator()
        self._events: list[tuple[float, int, Evaluation, int]] = []
        self._free = list(range(workers))

    def slots(self) -> int:
        return self.workers

    def submit(self, ticket: int, config: Config) -> None:
        measurement = self._evaluator(self.problem, config).measurement
        seconds = float(self.duration(measurement))
        worker = heapq.heappop(self._free)
        finish = self.clock + seconds
        heapq.heappush(
            self._events, (finish, ticket, Evaluation(measurement, self.clock, seconds), worker)
        )
        self.busy_s += seconds

    def wait(self) -> list[Finished]:
        """The evaluations finishing next (those finishing at the same instant together)."""
        if not self._events:
            raise RuntimeError("nothing was submitted")
        self.clock = self._events[0][0]
        out = []
        while self._events and self._events[0][0] == self.clock:
            _, ticket, evaluation, worker = heapq.heappop(self._events)
            heapq.heappush(self._free, worker)
            out.append(Finished(ticket, evaluation, f"simulated-{worker}"))
        return out

    def close(self) -> None:
        self._events.clear()
