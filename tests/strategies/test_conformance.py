"""The contract every registered strategy must honour (Optuna-style shared suite).

Parametrised over :func:`available_strategies`, so a newly registered strategy is
checked without editing this file: only valid configurations, never one twice, never
more than the budget, the same trials for the same seed (also across a resume, and for
an asynchronous run across a kill with evaluations in flight), failures tolerated, on a
small enumerable space and on the 54-factor constrained one.
The peers' adapters (Optuna, Kernel Tuner, SMAC3) have their own suite,
``test_peers.py``: Kernel Tuner enumerates its space (no 54-factor space) and their
start-up costs call for smaller budgets.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpautotune.parallel import SimulatedWorkers, run_parallel
from gpautotune.problems import ConstrainedBitsProblem, Measurement, Problem, Status
from gpautotune.space import Boolean, IntRange, Real, Space
from gpautotune.storage import Journal
from gpautotune.strategies import available_strategies, make_strategy
from gpautotune.strategies.peers import is_peer
from gpautotune.tuner import TuningRun, tune
from tests.strategies.tiny import tiny_run

STRATEGIES = [name for name in available_strategies() if not is_peer(name)]

#: Smaller settings for strategies whose defaults are sized for real budgets (speed only).
FAST: dict[str, dict[str, Any]] = {
    "two-stage": {"samples": 10, "ensemble": 3, "hidden": 8, "candidates": 2000},
    "dlmt": {"candidates": 1000, "restarts": 2},
    "lm": {"candidates": 2000},
    "qr": {"candidates": 2000},
    "gpr": {"n_init": 8, "restarts": 0, "sample_size": 300, "perturbations": 16},
}


class FlakyGrid(Problem):
    """A small constrained grid (3 factors, 140 valid points) whose evaluations fail for
    about a third of the configurations (``run_error``) and, with ``fail_all``, always."""

    name = "flaky-grid"

    def __init__(self, fail_all: bool = False) -> None:
        self.fail_all = fail_all
        self.space = Space(
            [IntRange("a", 0, 11), IntRange("b", 0, 11), Boolean("c")],
            constraints=["a + b <= 13", "(a + b) % 2 == 0 or c"],
            name="flaky-grid",
        )

    def evaluate(self, config: dict[str, Any]) -> Measurement:
        index = self.space.to_index([config])
        if not self.space.valid_mask(index)[0]:
            return Measurement.failure(Status.INVALID, "violates the constraints")
        a, b, c = config["a"], config["b"], int(config["c"])
        if self.fail_all or (3 * a + 5 * b + c) % 3 == 0:
            return Measurement.failure(Status.RUN_ERROR, "simulated crash")
        return Measurement.success(1.0 + (a - 7) ** 2 + 0.5 * (b - 3) ** 2 + 2.0 * c)


def _run(name: str, problem: Problem, budget: int, seed: int = 0, **kwargs: Any):
    return tune(problem, name, budget, seed=seed, strategy_options=FAST.get(name), **kwargs)


def _check_trials(problem: Problem, result, budget: int) -> None:
    configs = [t.config for t in result.trials]
    assert 1 <= result.used <= budget
    index = problem.space.to_index(configs)
    assert problem.space.valid_mask(index).all(), "a strategy proposed an invalid configuration"
    keys = problem.space.row_keys(index).tolist()
    assert len(set(keys)) == len(keys), "a strategy proposed a configuration twice"


@pytest.fixture(scope="module")
def bits() -> ConstrainedBitsProblem:
    return ConstrainedBitsProblem()


@pytest.mark.parametrize("name", STRATEGIES)
def test_enumerable_space_with_failures(name: str) -> None:
    problem = FlakyGrid()
    result = _run(name, problem, 40)
    _check_trials(problem, result, 40)
    failed = [t for t in result.trials if not t.ok]
    assert all(t.status is Status.RUN_ERROR for t in failed)
    if result.used == 1:  # one-shot rules (round-robin) may hit a failing configuration
        return
    assert result.best is not None and result.best_value >= 1.0


@pytest.mark.parametrize("name", STRATEGIES)
def test_non_enumerable_space(name: str, bits: ConstrainedBitsProblem) -> None:
    result = _run(name, bits, 30)
    _check_trials(bits, result, 30)
    assert result.best_value >= bits.optimum - 1e-9


@pytest.mark.parametrize("name", STRATEGIES)
def test_same_seed_same_trials(name: str) -> None:
    first, second = (_run(name, FlakyGrid(), 25, seed=7) for _ in range(2))
    assert [t.config for t in first.trials] == [t.config for t in second.trials]


@pytest.mark.parametrize("name", STRATEGIES)
def test_resume_continues_the_same_run(name: str, tmp_path) -> None:
    whole = _run(name, FlakyGrid(), 45, seed=3)
    path = tmp_path / "journal.db"
    _run(name, FlakyGrid(), 28, seed=3, storage=path)
    resumed = _run(name, FlakyGrid(), 45, seed=3, storage=path)
    assert [t.config for t in resumed.trials] == [t.config for t in whole.trials]


def _killed_copy(journal: Path, copy: Path, stored: int) -> Path:
    """The journal as a run killed after storing ``stored`` trials leaves it."""
    with sqlite3.connect(journal) as src, sqlite3.connect(copy) as dst:
        src.backup(dst)
        dst.execute("DELETE FROM trials WHERE number >= ?", (stored,))
    return copy


@pytest.mark.parametrize("name", STRATEGIES)
def test_a_run_killed_anywhere_resumes_as_the_uninterrupted_one(name: str, tmp_path) -> None:
    """Same seed + same stored trials = same proposals, whatever was asked and lost: a
    run killed after any trial (in the middle of a batch of 3 too) and resumed measures
    the uninterrupted run's configurations in the same order. GPR samples its pool here
    (not the whole grid) so that its backlog has to be rebuilt too."""
    sampled = {"exhaustive_limit": 0} if name in ("gpr", "gpr-seeds") else {}
    options = {**FAST.get(name, {}), **sampled}
    whole_db = tmp_path / "whole.db"

    def run(storage: Path):
        return tune(
            FlakyGrid(), name, 24, seed=11, strategy_options=options, storage=storage, batch_size=3
        )

    whole = [t.config for t in run(whole_db).trials]
    for stored in (7, 16):  # 7: mid-batch in gpr's initial design, 16: mid-batch later
        resumed = run(_killed_copy(whole_db, tmp_path / f"killed-{stored}.db", stored))
        assert [t.config for t in resumed.trials] == whole, f"resumed after {stored} trials"


@pytest.mark.parametrize("name", STRATEGIES)
def test_everything_failing_terminates(name: str) -> None:
    problem = FlakyGrid(fail_all=True)
    result = _run(name, problem, 15)
    assert result.used <= 15 and result.best is None
    _check_trials(problem, result, 15)


@pytest.mark.parametrize("name", STRATEGIES)
def test_a_space_smaller_than_the_design_is_measured_whole(name: str) -> None:
    """Three valid configurations, a budget of 8 and designs of 10 or more: every
    strategy measures the three, each once, and stops (GPR's initial design once
    refused a space with fewer configurations than ``n_init``; two-stage once failed
    ranking an empty pool)."""
    result = tiny_run(name, 0, FAST.get(name))
    measured = sorted((t.config["x"], t.config["y"]) for t in result.trials)
    if name == "round-robin":  # a one-shot rule: one configuration is its whole run
        assert len(measured) == 1
        return
    if name == "greedy":  # ends at the first local minimum: (1, 0), from any start
        assert (1, 0) in measured and len(set(measured)) == len(measured) <= 3
        return
    assert measured == [(0, 0), (0, 1), (1, 0)]


def test_suite_covers_the_baselines() -> None:
    expected = {
        "random",
        "sobol",
        "lhs",
        "greedy",
        "greedy-restart",
        "genetic",
        "annealing",
        "lm",
        "qr",
        "dlmt",
        "two-stage",
    }
    assert expected <= set(STRATEGIES)


def test_flaky_grid_is_what_the_suite_assumes() -> None:
    problem = FlakyGrid()
    valid = problem.space.enumerate()
    outcomes = [problem.evaluate(c).ok for c in valid]
    assert 100 < len(valid) < 200 and 0.2 < 1 - np.mean(outcomes) < 0.5


@pytest.mark.parametrize("name", STRATEGIES)
def test_pending_configurations_are_never_proposed(name: str) -> None:
    problem = FlakyGrid()
    space = problem.space

    def strategy():
        return make_strategy(name, space, seed=5, **FAST.get(name, {}))

    pending = [p.config for p in strategy().ask(4)]
    # a strategy that did not propose them (a resumed run) skips them all the same
    fresh = strategy()
    later = [p.config for p in fresh.ask(6, pending=pending)]
    assert len(fresh.pending) == len(pending)
    if later:
        keys = set(space.row_keys(space.to_index(pending)).tolist())
        assert not keys & set(space.row_keys(space.to_index(later)).tolist())


class _Killed(Exception):
    """The tuner process dying (in the test: an exception out of the loop)."""


class _LoggedWorkers(SimulatedWorkers):
    """Simulated workers that log each dispatch with the trials stored before it."""

    def __init__(self, run: TuningRun, workers: int) -> None:
        super().__init__(run.problem, workers, _duration)
        self.run, self.log = run, []

    def submit(self, ticket: int, config: dict[str, Any]) -> None:
        self.log.append((len(self.run.trials), dict(config)))
        super().submit(ticket, config)


def _duration(m: Measurement) -> float:
    return 1.0 + (m.value or 0.0) % 7.3 if m.ok else 0.5


def _infos(trials, configs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proposal info of the trials of ``configs``, without timings and workers."""
    by_config = {str(sorted(t.config.items())): t.info for t in trials}
    return [
        {
            k: v
            for k, v in by_config[str(sorted(c.items()))].items()
            if k[-2:] != "_s" and k != "worker"
        }
        for c in configs
    ]


#: GPR samples a pool smaller than the grid, so that its backlog (rebuilt on resume from
#: the model steps of the trials and of the pending proposals) decides some picks.
_SMALL_POOL = {"exhaustive_limit": 0, "sample_size": 40}


def _async_run(name: str, storage: Path, kill_at: int | None = None) -> _LoggedWorkers:
    options = {**FAST.get(name, {}), **(_SMALL_POOL if name == "gpr" else {})}
    run = TuningRun(
        FlakyGrid(), name, storage=storage, seed=11, budget=24, strategy_options=options
    )
    workers = _LoggedWorkers(run, 3)

    def told(trial, r) -> None:
        if len(r.trials) == kill_at:
            raise _Killed

    try:
        run_parallel(run, workers, told)
        run.finish()
    except _Killed:
        pass
    return workers


@pytest.mark.parametrize("name", STRATEGIES)
def test_an_asynchronous_run_killed_with_evaluations_in_flight_resumes_as_uninterrupted(
    name: str, tmp_path
) -> None:
    """3 simulated workers; the tuner dies when a worker frees up (up to two evaluations
    in flight). Resumed, it measures those again, once each, and asks the strategy, given
    them as pending with their stored info, for what the uninterrupted run asked there."""
    whole = _async_run(name, tmp_path / "whole.db").log
    with Journal(tmp_path / "whole.db") as journal:
        whole_trials = journal.trials(journal.runs()[0].id)
    asks = sorted({told for told, _ in whole[3:]})  # dispatches after the initial ones
    # (none for a one-shot rule such as round-robin: nothing to kill in between)
    for kill_at in sorted({asks[len(asks) // 3], asks[2 * len(asks) // 3]} if asks else ()):
        db = tmp_path / f"killed-{kill_at}.db"
        before = _async_run(name, db, kill_at=kill_at).log
        with Journal(db) as journal:
            (record,) = journal.runs()
            in_flight = [r.config for r in journal.running(record.id)]
        assert len(in_flight) <= 2 and all(c in [c for _, c in before] for c in in_flight)
        resumed = _async_run(name, db).log
        again = len(in_flight)
        assert [c for _, c in resumed[:again]] == in_flight  # measured again first
        expected = [c for told, c in whole if told == kill_at]
        assert [c for _, c in resumed[again : again + len(expected)]] == expected, kill_at
        with Journal(db) as journal:
            trials = journal.trials(record.id)
            assert journal.running(record.id) == []
        # the same proposals, down to their diagnostics (GPR: fit number, exact
        # hyperparameters, pending rows, acquisition values)
        assert _infos(trials, expected) == _infos(whole_trials, expected)
        keys = [str(sorted(t.config.items())) for t in trials]
        dispatched = {str(sorted(c.items())) for _, c in before + resumed}
        assert len(set(keys)) == len(keys) <= 24  # nothing measured twice
        assert set(keys) == dispatched  # nothing lost


@pytest.mark.parametrize(
    "space",
    [
        Space([IntRange("a", 0, 30), IntRange("b", 0, 30), Boolean("c")]),  # integer keys
        Space([Real("x", 0.0, 1.0), IntRange("b", 0, 30)]),  # byte keys
    ],
)
def test_is_seen_marks_exactly_the_rows_marked(space: Space) -> None:
    strategy = make_strategy("random", space, seed=0)
    index = space.to_index(space.sample(40, method="random", seed=3))
    strategy.mark_seen(index[::3])
    expected = np.zeros(len(index), dtype=bool)
    expected[::3] = True
    assert np.array_equal(strategy.is_seen(index), expected)
    assert not strategy.is_seen(index[1:2]).any()
    strategy.mark_seen(index[1:2])
    assert strategy.is_seen(index[1:2]).all()
