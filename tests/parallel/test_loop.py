"""The asynchronous loop in simulated time: pending configurations, budget, resume."""

from __future__ import annotations

from typing import Any

import pytest

from gpautotune.measurement import Measurement
from gpautotune.parallel import SimulatedWorkers, run_parallel
from gpautotune.problems import BoothProblem
from gpautotune.storage import Journal
from gpautotune.tuner import TuningRun, tune

FAST = {"n_init": 6, "restarts": 0}


def _duration(m: Measurement) -> float:
    """Distinct, value-dependent durations (no ties after the first evaluations)."""
    return 1.0 + (m.value or 0.0) % 7.3 if m.ok else 0.5


def _simulated(problem, strategy: str, budget: int, workers: int, **kwargs: Any) -> TuningRun:
    run = TuningRun(problem, strategy, budget=budget, seed=2, **kwargs)
    run_parallel(run, SimulatedWorkers(problem, workers, _duration))
    return run


def _untimed(trials) -> list[tuple[dict, dict]]:
    return [
        (t.config, {k: v for k, v in t.info.items() if not k.endswith("_s") and k != "worker"})
        for t in trials
    ]


@pytest.mark.parametrize("strategy", ["gpr", "sobol", "genetic"])
def test_one_worker_is_the_sequential_run(strategy: str) -> None:
    problem = BoothProblem()
    options = FAST if strategy == "gpr" else None
    sequential = tune(problem, strategy, 10, seed=2, strategy_options=options)
    simulated = _simulated(problem, strategy, 10, 1, strategy_options=options)
    assert _untimed(simulated.trials) == _untimed(sequential.trials)


def test_trials_are_committed_in_completion_order() -> None:
    problem = BoothProblem()
    workers = SimulatedWorkers(problem, 3, _duration)
    run = TuningRun(problem, "random", budget=20, seed=2)
    run_parallel(run, workers)
    ends = [t.started_at + t.duration_s for t in run.trials]
    assert ends == sorted(ends) and run.used == 20
    assert workers.clock == pytest.approx(max(ends))
    # three workers kept busy: the simulated wall time is about a third of the work
    assert workers.clock < 0.45 * workers.busy_s


def test_gpr_is_told_what_is_in_flight_and_never_proposes_it_twice() -> None:
    problem = BoothProblem()
    run = _simulated(problem, "gpr", 14, 4, strategy_options=FAST)
    keys = problem.space.row_keys(problem.space.to_index([t.config for t in run.trials]))
    assert len(set(keys.tolist())) == 14 == run.used
    model = [len(t.info["fit"].get("pending", [])) for t in run.trials if t.source == "model"]
    assert len(model) == 8 and set(model) == {3}  # each asked while 3 others ran


class _Counting(BoothProblem):
    def __init__(self) -> None:
        super().__init__()
        self.evaluated: list[dict] = []

    def evaluate(self, config):
        self.evaluated.append(dict(config))
        return super().evaluate(config)


def test_the_budget_counts_evaluations_in_flight() -> None:
    problem = _Counting()
    run = _simulated(problem, "random", 7, 5)
    assert len(problem.evaluated) == 7 == run.used


def test_a_resumed_run_measures_its_in_flight_configurations_once(tmp_path) -> None:
    db = tmp_path / "j.db"
    problem = _Counting()
    crashed = TuningRun(problem, "sobol", storage=db, budget=12, seed=2)
    for config in crashed.ask(3):
        crashed.tell(config, problem.evaluate(config))
    in_flight = crashed.ask(4, record_running=True)  # dispatched, then the tuner died
    assert len(Journal(db).running(crashed.run_id)) == 4
    resumed = TuningRun(problem, "sobol", storage=db, budget=12, seed=2)
    assert [r.config for r in resumed.recovered] == in_flight
    run_parallel(resumed, SimulatedWorkers(problem, 3, _duration))
    measured = [t.config for t in resumed.trials]
    assert len(measured) == 12 and all(measured.count(c) == 1 for c in measured)
    assert all(c in measured for c in in_flight)
    # evaluated once more each after the crash, with the strategy's own info kept
    assert [problem.evaluated.count(c) for c in in_flight] == [1, 1, 1, 1]
    assert {resumed.trials[i].source for i, c in enumerate(measured) if c in in_flight} == {"sobol"}
    assert Journal(db).running(resumed.run_id) == []


def test_a_lowered_budget_drops_the_in_flight_records_it_cannot_measure(tmp_path) -> None:
    db = tmp_path / "j.db"
    problem = BoothProblem()
    crashed = TuningRun(problem, "random", storage=db, budget=10, seed=2)
    crashed.ask(5, record_running=True)
    resumed = TuningRun(problem, "random", storage=db, budget=3, seed=2)
    run_parallel(resumed, SimulatedWorkers(problem, 2, _duration))
    resumed.finish()
    assert resumed.used == 3 and Journal(db).running(resumed.run_id) == []


def test_a_journal_without_the_running_table_stays_readable(tmp_path) -> None:
    import sqlite3

    db = tmp_path / "old.db"
    tune(BoothProblem(), "random", 4, seed=1, storage=db)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE running_trials")
    with Journal(db, read_only=True) as journal:
        (run,) = journal.runs()
        assert journal.running(run.id) == [] and len(journal.trials(run.id)) == 4
    resumed = tune(BoothProblem(), "random", 6, seed=1, storage=db)
    assert resumed.used == 6


@pytest.mark.parametrize(("ask_s", "clock"), [(0.0, 3.0), (2.0, 9.0), (0.5, 4.5)])
def test_simulated_asks_take_their_time_and_batch_what_finished_meanwhile(ask_s, clock):
    problem = BoothProblem()
    workers = SimulatedWorkers(problem, 3, lambda m: 1.0, ask_s=ask_s)
    run = TuningRun(problem, "random", budget=9, seed=2)
    run_parallel(run, workers)
    assert workers.clock == pytest.approx(clock) and run.used == 9
    # three asks of three configurations each: every wait hands over a whole batch
    assert sorted({t.started_at for t in run.trials}) == pytest.approx(
        [ask_s, 1 + 2 * ask_s, 2 + 3 * ask_s]
    )


def test_a_sequential_resume_measures_the_in_flight_configurations_first(tmp_path) -> None:
    db = tmp_path / "j.db"
    problem = _Counting()
    crashed = TuningRun(problem, "random", storage=db, budget=10, seed=2)
    in_flight = crashed.ask(3, record_running=True)
    result = tune(problem, "random", 10, seed=2, storage=db)
    assert [t.config for t in result.trials[:3]] == in_flight
    assert problem.evaluated[:3] == in_flight and len(problem.evaluated) == 10
