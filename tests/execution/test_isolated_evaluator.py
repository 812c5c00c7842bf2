"""IsolatedEvaluator with a plain picklable problem: results, crashes, hangs, restarts."""

from __future__ import annotations

import os
import time

import pytest

from gpautotune.exceptions import ConfigError
from gpautotune.execution import InProcessEvaluator, IsolatedEvaluator
from gpautotune.problems import Measurement, Problem, Status
from gpautotune.space import IntRange, Space


class Scripted(Problem):
    """x = 0: crash the process; x = 1: hang; x = 2: raise; otherwise value x² and the
    worker pid."""

    name = "scripted"

    def __init__(self) -> None:
        self.prepared_in: int | None = None

    @property
    def space(self) -> Space:
        return Space([IntRange("x", 0, 9)])

    def prepare(self) -> None:
        self.prepared_in = os.getpid()

    def evaluate(self, config):
        x = config["x"]
        if x == 0:
            os._exit(3)
        if x == 1:
            time.sleep(3600)
        if x == 2:
            raise RuntimeError("boom")
        return Measurement.success(float(x * x), pid=os.getpid(), prepared_in=self.prepared_in)


@pytest.fixture(scope="module")
def evaluator():
    ev = IsolatedEvaluator(timeout_s=2)
    yield ev
    ev.close()


def test_results_come_from_one_prepared_worker(evaluator):
    problem = Scripted()
    a, b = evaluator(problem, {"x": 3}), evaluator(problem, {"x": 4})
    assert (a.measurement.value, b.measurement.value) == (9.0, 16.0)
    assert a.measurement.metrics["pid"] == b.measurement.metrics["pid"] != os.getpid()
    assert a.measurement.metrics["prepared_in"] == a.measurement.metrics["pid"]
    assert InProcessEvaluator()(problem, {"x": 3}).measurement.value == a.measurement.value


def test_an_exception_is_a_run_error_and_keeps_the_worker(evaluator):
    problem = Scripted()
    pid = evaluator(problem, {"x": 5}).measurement.metrics["pid"]
    started = evaluator.workers_started
    m = evaluator(problem, {"x": 2}).measurement
    assert m.status is Status.RUN_ERROR and "boom" in m.error
    assert evaluator(problem, {"x": 5}).measurement.metrics["pid"] == pid
    assert evaluator.workers_started == started


def test_a_crash_costs_one_trial(evaluator):
    problem = Scripted()
    started = evaluator.workers_started
    m = evaluator(problem, {"x": 0}).measurement
    assert m.status is Status.RUN_ERROR and "exit code 3" in m.error
    assert evaluator(problem, {"x": 6}).measurement.value == 36.0
    assert evaluator.workers_started == started + 1


def test_a_hang_times_out_and_the_next_evaluation_runs(evaluator):
    problem = Scripted()
    started = evaluator.workers_started
    ev = evaluator(problem, {"x": 1})
    assert ev.measurement.status is Status.TIMEOUT and ev.duration_s < 30
    assert evaluator(problem, {"x": 7}).measurement.value == 49.0
    assert evaluator.workers_started == started + 1


def test_bad_timeouts_are_refused():
    with pytest.raises(ConfigError):
        IsolatedEvaluator(timeout_s=0)


def test_an_unpicklable_problem_is_a_run_error_naming_the_cause(evaluator):
    problem = Scripted()
    problem.handle = lambda: None  # lambdas do not pickle
    m = evaluator(problem, {"x": 3}).measurement
    assert m.status is Status.RUN_ERROR and "not picklable" in m.error
