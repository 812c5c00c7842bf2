import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

from gpautotune.exceptions import BudgetError, GPAutotuneError
from gpautotune.problems import Measurement, Status
from gpautotune.problems.synthetic import BoothProblem
from gpautotune.storage import Journal
from gpautotune.trial import Origin, Trial
from gpautotune.tuner import TuningRun, tune


class FlakyBooth(BoothProblem):
    """Booth that fails every configuration with x1 == 0 and crashes when x1 == 5."""

    def evaluate(self, config):
        if config["x1"] == 5:
            raise RuntimeError("driver crash")
        if config["x1"] == 0:
            return Measurement.failure(Status.BUILD_ERROR, "no")
        return super().evaluate(config)


@pytest.mark.parametrize("strategy", ["random", "sobol"])
def test_budget_counts_failures_and_configs_are_distinct(strategy):
    result = tune(FlakyBooth(), strategy, 200, seed=1)
    assert result.used == 200 == len(result.trials)
    keys = {tuple(t.config.values()) for t in result.trials}
    assert len(keys) == 200
    statuses = {t.status for t in result.trials}
    assert {Status.OK, Status.BUILD_ERROR, Status.RUN_ERROR} <= statuses
    crash = next(t for t in result.trials if t.status is Status.RUN_ERROR)
    assert "driver crash" in crash.measurement.error


def test_strategy_exhaustion_stops_the_loop():
    problem = BoothProblem()
    result = tune(problem, "random", 10_000, seed=0)
    assert result.used == 441 and result.best_value == 0


def test_seeded_runs_are_reproducible(laplacian):
    a = tune(laplacian, "sobol", 30, seed=4)
    b = tune(laplacian, "sobol", 30, seed=4)
    c = tune(laplacian, "sobol", 30, seed=5)
    assert [t.config for t in a.trials] == [t.config for t in b.trials]
    assert [t.config for t in a.trials] != [t.config for t in c.trials]


def test_resume_continues_the_same_sequence(tmp_path):
    db = tmp_path / "r.db"
    full = tune(BoothProblem(), "random", 30, seed=7)
    tune(BoothProblem(), "random", 12, seed=7, storage=db)
    resumed = tune(BoothProblem(), "random", 30, seed=7, storage=db)
    assert [t.config for t in resumed.trials] == [t.config for t in full.trials]


def test_ask_tell_api_stores_before_telling(tmp_path):
    problem = BoothProblem()
    run = TuningRun(problem.space, "sobol", storage=tmp_path / "a.db", seed=3, budget=5)
    told = []
    original = run.strategy.tell

    def spy(trials):
        # the trial is already durable when the strategy hears of it
        stored = Journal(tmp_path / "a.db").trials(run.run_id)
        told.append(len(stored))
        original(trials)

    run.strategy.tell = spy
    while run.remaining:
        for config in run.ask(2):
            run.tell(config, problem.evaluate(config).value)
    assert told == [1, 2, 3, 4, 5]
    with pytest.raises(BudgetError):
        run.tell({"x1": 0, "x2": 0}, 1.0)
    other = TuningRun(problem.space, "sobol", seed=9, budget=50)
    other.tell({"x1": 1, "x2": 1}, 1.0)
    with pytest.raises(GPAutotuneError, match="already measured"):
        other.tell({"x1": 1, "x2": 1}, 1.0)


def test_warm_start_is_data_not_budget():
    problem = BoothProblem()
    warm = [Trial(0, {"x1": 1, "x2": 3}, Measurement.success(0.0), origin=Origin.WARM_START)]
    result = tune(problem, "sobol", 5, seed=1, warm_start=warm)
    assert result.used == 5 and len(result.trials) == 6
    assert result.best_value == 0
    assert all(t.config != {"x1": 1, "x2": 3} for t in result.trials[1:])


def test_bad_budget_is_refused():
    with pytest.raises(BudgetError):
        tune(BoothProblem(), "random", 0)


SLOW_RUN = textwrap.dedent(
    """
    import sys, time
    from gpautotune.problems.synthetic import BoothProblem
    from gpautotune.tuner import tune

    class SlowBooth(BoothProblem):
        name = "slow-booth"
        def evaluate(self, config):
            time.sleep(0.02)
            return super().evaluate(config)

    tune(SlowBooth(), "random", int(sys.argv[2]), seed=11, storage=sys.argv[1])
    """
)


def _count(db):
    try:
        with sqlite3.connect(db) as conn:
            return conn.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_kill_minus_nine_then_resume_loses_and_repeats_nothing(tmp_path):
    db = str(tmp_path / "k.db")
    script = tmp_path / "slow.py"
    script.write_text(SLOW_RUN)
    budget = 60
    proc = subprocess.Popen([sys.executable, str(script), db, str(budget)], env=os.environ.copy())
    deadline = time.time() + 60
    while _count(db) < 15 and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = Journal(db).trials(1)
    assert 15 <= len(before) < budget
    subprocess.run([sys.executable, str(script), db, str(budget)], check=True, timeout=120)
    after = Journal(db).trials(1)
    assert after[: len(before)] == before  # nothing lost or rewritten
    assert [t.number for t in after] == list(range(budget))
    keys = [tuple(t.config.values()) for t in after]
    assert len(set(keys)) == budget  # nothing measured twice
    # and the resumed run follows the uninterrupted sequence exactly
    uninterrupted = tune(BoothProblem(), "random", budget, seed=11)
    assert [t.config for t in after] == [t.config for t in uninterrupted.trials]


def test_tell_refuses_a_configuration_the_space_does_not_admit(tmp_path):
    """A told configuration that violates the predicates (or is not made of levels) is
    refused with the rule it breaks; nothing is stored, the strategy hears nothing."""
    from gpautotune.exceptions import SpaceError
    from gpautotune.space import IntRange, Space

    space = Space([IntRange("a", 0, 5), IntRange("b", 0, 5)], constraints=["a + b <= 4"])
    run = TuningRun(space, "random", storage=tmp_path / "j.db", seed=0, budget=5)
    with pytest.raises(SpaceError, match=r"a \+ b <= 4"):
        run.tell({"a": 5, "b": 5}, 1.0)
    with pytest.raises(SpaceError, match="level"):
        run.tell({"a": 1.5, "b": 0}, 1.0)
    assert run.trials == [] and run.strategy.trials == []
    assert run.journal.count_trials(run.run_id) == 0
    run.tell({"a": 1, "b": 2}, 1.0)
    assert [t.config for t in run.journal.trials(run.run_id)] == [{"a": 1, "b": 2}]


def test_a_batch_interrupted_twice_still_resumes_into_the_same_run(tmp_path):
    """Killed in a batch, resumed, killed again inside the rest of that batch: the
    proposals asked again keep the batch's record, so the second resume finds it too."""
    options = {"n_init": 4}

    def run(storage, **kw):
        return TuningRun(BoothProblem(), "gpr", storage=storage, seed=4, budget=14, **kw)

    whole = tune(
        BoothProblem(),
        "gpr",
        14,
        seed=4,
        storage=tmp_path / "w.db",
        batch_size=4,
        strategy_options=options,
    )
    db = tmp_path / "killed.db"
    with sqlite3.connect(tmp_path / "w.db") as src, sqlite3.connect(db) as dst:
        src.backup(dst)
        dst.execute("DELETE FROM trials WHERE number >= 9")  # 1 of the batch 8..11 stored
    first = run(db, strategy_options=options)
    config = first.ask(4)[0]  # the rest of the batch comes first, alone
    assert config == whole.trials[9].config
    first.tell(config, BoothProblem().evaluate(config))
    first.journal.close()  # killed again: 2 of the batch's 4 stored
    resumed = tune(
        BoothProblem(), "gpr", 14, seed=4, storage=db, batch_size=4, strategy_options=options
    )
    assert [t.config for t in resumed.trials] == [t.config for t in whole.trials]


@pytest.mark.parametrize(
    ("parameters", "constraint"),
    [
        ([("x", 0, 3)], "x > 10"),  # counted: a small raw space
        ([("x", 0, 3), ("y", 0, 10**6)], "x > 10"),  # the plan's enumerated group is empty
    ],
)
@pytest.mark.parametrize("strategy", ["random", "gpr"])
def test_a_space_that_admits_nothing_is_refused_before_the_run(
    tmp_path, parameters, constraint, strategy
):
    """Constraints that no configuration meets are one error naming them, before any
    trial or journal run (the strategies would otherwise end at once, or fail inside)."""
    from gpautotune.exceptions import SpaceError
    from gpautotune.space import IntRange, Space

    space = Space([IntRange(*p) for p in parameters], [constraint])
    db = tmp_path / "j.db"
    with pytest.raises(SpaceError, match=r"the constraints \['x > 10'\] admit no configuration"):
        tune(lambda c: float(c["x"]), strategy, 5, space=space, storage=str(db))
    assert not db.exists() or not Journal(str(db)).runs()
    with pytest.raises(SpaceError, match="admit no configuration"):  # the ask/tell API too
        TuningRun(space, strategy, budget=5)


def test_a_strategy_made_for_another_space_is_refused_by_name():
    """A strategy instance made for other parameters is one error naming both sets,
    before the run opens (it failed at its first proposal with a configuration error)."""
    from gpautotune.exceptions import ConfigError
    from gpautotune.space import IntRange, Space
    from gpautotune.strategies import make_strategy

    other = make_strategy("random", Space([IntRange("y", 0, 9)]))
    with pytest.raises(ConfigError, match=r"made for the parameters \['y'\], the problem has"):
        tune(BoothProblem(), other, 5)
    same = make_strategy("random", BoothProblem().space, seed=1)
    assert len(tune(BoothProblem(), same, 5).trials) == 5
