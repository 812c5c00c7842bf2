"""A run's label names a strategy with its options on a problem (as a study's name does
in Optuna): runs share it across seeds and problems; the tuner refuses it for a run of
the problem with another strategy or other options, in the transaction that makes the
run, and resumes the run of the same settings."""

import threading
import time

import pytest

from gpautotune import TuningRun, tune
from gpautotune.exceptions import StorageError
from gpautotune.problems import BoothProblem
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal, RunSpec, check_run_name
from gpautotune.strategies import make_strategy
from gpautotune.tuner import RunNameError, run_spec


def _stored(db):
    with Journal(db) as journal:
        return [(r.id, r.strategy, r.seed, r.label) for r in journal.runs()], sum(
            len(journal.trials(r.id)) for r in journal.runs()
        )


def test_a_name_taken_with_another_strategy_is_refused_and_nothing_stored(tmp_path):
    db = tmp_path / "runs.db"
    tune(BoothProblem(), "random", 5, storage=db, label="x", seed=1)
    before = _stored(db)
    with pytest.raises(RunNameError) as refused:
        tune(BoothProblem(), "sobol", 5, storage=db, label="x", seed=2)
    message = str(refused.value)
    for part in (
        "run name 'x'",
        repr(str(db)),
        "run 1 (booth / random, seed 1",
        "strategy random there, sobol here",
    ):
        assert part in message
    assert "another name" in message and "strategy and options" in message
    with pytest.raises(RunNameError, match="run name 'x'"):
        TuningRun(BoothProblem(), "sobol", storage=db, seed=1, label="x")
    assert _stored(db) == before
    assert isinstance(refused.value, StorageError)  # caught as a journal error too


def test_a_name_is_shared_by_seeds_and_problems(tmp_path):
    """Repetitions (a comparison's, or a loop's) share the strategy's label, as reports
    group them; another problem under the name is another series."""
    db = tmp_path / "runs.db"
    for seed in (1, 2):
        tune(BoothProblem(), "random", 3, storage=db, label="RS", seed=seed)
    space = BoothProblem().space
    tune(lambda c: float(c["x1"]), "sobol", 3, space=space, storage=db, label="RS", seed=1)
    assert [(r[1], r[2]) for r in _stored(db)[0]] == [("random", 1), ("random", 2), ("sobol", 1)]


def test_the_same_name_and_settings_resume_the_run(tmp_path):
    db = tmp_path / "runs.db"
    first = tune(BoothProblem(), "random", 5, storage=db, label="x", seed=1)
    again = tune(BoothProblem(), "random", 7, storage=db, label="x", seed=1)
    assert again.run_id == first.run_id and again.used == 7
    other = tune(BoothProblem(), "random", 5, storage=db, label="y", seed=2)
    assert other.run_id != first.run_id  # another name: another run
    assert len(_stored(db)[0]) == 2


def test_options_that_differ_are_named(tmp_path):
    db = tmp_path / "runs.db"
    options = {"population": 4}
    tune(BoothProblem(), "genetic", 4, storage=db, label="g", seed=1, strategy_options=options)
    with pytest.raises(RunNameError, match=r"strategy option 'population' 4 there, 6 here"):
        tune(
            BoothProblem(),
            "genetic",
            4,
            storage=db,
            label="g",
            seed=1,
            strategy_options={"population": 6},
        )


def test_a_run_set_aside_frees_its_name(tmp_path):
    db = tmp_path / "runs.db"
    with TuningRun(BoothProblem(), "random", storage=db, seed=1, label="x", budget=3) as run:
        run.set_aside("a broken set-up")
    assert tune(BoothProblem(), "random", 3, storage=db, label="x", seed=1).run_id == 2
    with TuningRun(BoothProblem(), "random", storage=db, seed=1, label="x", budget=3) as run:
        run.set_aside("a broken set-up again")
    assert tune(BoothProblem(), "sobol", 3, storage=db, label="x", seed=1).run_id == 3
    with pytest.raises(RunNameError, match="by run 3"):
        tune(BoothProblem(), "random", 3, storage=db, label="x", seed=2)
    assert tune(BoothProblem(), "sobol", 3, storage=db, label="x", seed=2).run_id == 4


def test_unnamed_runs_are_never_refused(tmp_path):
    db = tmp_path / "runs.db"
    tune(BoothProblem(), "random", 3, storage=db, seed=1)
    tune(BoothProblem(), "sobol", 3, storage=db, seed=2)
    assert len(_stored(db)[0]) == 2


def _spec(seed, strategy="s"):
    return RunSpec("p", {}, strategy, {}, seed, {}, label="x")


def test_the_name_is_checked_in_the_transaction_that_makes_the_run(tmp_path):
    """Two processes opening runs of one name at once: the one that waits for the
    other's transaction sees its run and is refused (no two runs of one name)."""
    db = tmp_path / "runs.db"
    first = Journal(db)
    outcome: list[object] = []

    def open_second() -> None:
        with Journal(db) as second:
            try:
                outcome.append(second.open_run(_spec(2, "t"), 5, unique_name=True))
            except RunNameError as exc:
                outcome.append(exc)

    first._conn.execute("BEGIN IMMEDIATE")  # the first process, mid-way through open_run
    first._conn.execute(
        "INSERT INTO runs (key, problem, problem_settings, strategy, strategy_settings, seed,"
        " budget, space, versions, host, started_at, label)"
        " VALUES (?, 'p', '{}', 's', '{}', 1, 5, '{}', '{}', 'h', 0, 'x')",
        (_spec(1).key,),
    )
    waiting = threading.Thread(target=open_second)
    waiting.start()
    time.sleep(0.5)  # the second has read the journal (without the lock: no run of x)
    first._conn.execute("COMMIT")
    waiting.join(30)
    assert len(outcome) == 1 and isinstance(outcome[0], RunNameError), outcome
    assert [r.seed for r in first.runs()] == [1]


def test_journals_share_labels_unless_told_they_are_names(tmp_path):
    journal = Journal(tmp_path / "runs.db")
    journal.open_run(_spec(1), 5)
    journal.open_run(_spec(2, "t"), 5)  # the storage's default: labels are not checked
    with pytest.raises(RunNameError, match="strategy s there, u here"):
        journal.open_run(_spec(3, "u"), 5, unique_name=True)
    assert journal.open_run(_spec(1), 5, unique_name=True).seed == 1  # resumed
    assert len(journal.runs()) == 2


def test_another_space_under_a_name_is_another_problem(tmp_path):
    """Settings a strategy derives from the space (GPR's n_init) are not options the
    user changed: a run on another space under the name is not refused."""
    db = tmp_path / "runs.db"
    small = Space([IntRange(f"x{i}", 0, 9) for i in range(3)])
    large = Space([IntRange(f"x{i}", 0, 9) for i in range(8)])
    tune(_total, "gpr", 2, space=small, storage=db, label="g", seed=1)
    assert tune(_total, "gpr", 2, space=large, storage=db, label="g", seed=2).used == 2


def _total(config):
    return float(sum(config.values()))


def test_the_command_line_resumes_a_run_an_older_journal_shares_a_name_with(tmp_path):
    """Journals made before the rule may hold runs of other strategies under one name:
    each of them resumes."""
    db = tmp_path / "runs.db"
    with Journal(db) as journal:  # as an older version stored them
        for strategy in ("random", "sobol"):
            spec = run_spec(BoothProblem(), _strategy(strategy), seed=1, label="x")
            journal.open_run(spec, 3)
    with Journal(db) as journal:
        check_run_name(journal, run_spec(BoothProblem(), _strategy("random"), seed=1, label="x"))
    assert tune(BoothProblem(), "random", 3, storage=db, label="x", seed=1).run_id == 1


def _strategy(name):
    return make_strategy(name, BoothProblem().space, seed=1)
