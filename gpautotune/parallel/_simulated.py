"""Workers in simulated time: what N asynchronous workers would do, deterministically.

Each evaluation runs at once in this process, but its result is released only when a
virtual clock reaches its finish time, ``start + duration(measurement)``: with the
durations real workers would take (a paced replay's sleeps), the completion order is
the one real workers give. The tuner's own time is ``ask_s`` per ask on the clock (0
by default: a tuner that never keeps a worker waiting); evaluations that finish while
the tuner asks are handed over together at the end of the ask, as real ones are.
Sample-efficiency benchmarks use it to run many seeds cheaply.
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
        ask_s: simulated seconds of each ask of the tuner (the submissions that follow a
            :meth:`wait` start that much later).

    Attributes:
        clock: the simulated time (seconds since the first submission).
        busy_s: simulated seconds the workers spent evaluating, summed over workers.
    """

    def __init__(
        self,
        problem: Evaluable,
        workers: int,
        duration: Callable[[Measurement], float],
        ask_s: float = 0.0,
    ) -> None:
        if workers < 1 or ask_s < 0:
            raise ValueError(f"need workers >= 1 and ask_s >= 0, got {workers}, {ask_s}")
        self.problem, self.workers, self.duration = problem, workers, duration
        self.ask_s = float(ask_s)
        self.clock = 0.0
        self._asking = True  # the next submission comes after an ask
        self.busy_s = 0.0
        self._evaluator = InProcessEvaluator()
        self._events: list[tuple[float, int, Evaluation, int]] = []
        self._free = list(range(workers))

    def slots(self) -> int:
        return self.workers

    def submit(self, ticket: int, config: Config) -> None:
        if self._asking:
            self.clock += self.ask_s
            self._asking = False
        measurement = self._evaluator(self.problem, config).measurement
        seconds = float(self.duration(measurement))
        worker = heapq.heappop(self._free)
        finish = self.clock + seconds
        heapq.heappush(
            self._events, (finish, ticket, Evaluation(measurement, self.clock, seconds), worker)
        )
        self.busy_s += seconds

    def wait(self) -> list[Finished]:
        """The evaluations finished by now (during the last ask), or else those finishing
        next (at the same instant)."""
        if not self._events:
            raise RuntimeError("nothing was submitted")
        self.clock = max(self.clock, self._events[0][0])
        self._asking = True
        out = []
        while self._events and self._events[0][0] <= self.clock:
            _, ticket, evaluation, worker = heapq.heappop(self._events)
            heapq.heappush(self._free, worker)
            out.append(Finished(ticket, evaluation, f"simulated-{worker}"))
        return out

    def close(self) -> None:
        self._events.clear()
