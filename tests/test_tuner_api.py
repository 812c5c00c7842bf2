"""The library surface a newcomer meets first: plain functions and floats as objectives,
runs that finish, named runs (Optuna's ``load_if_exists``), loud stops on bugs."""

import logging

import numpy as np
import pytest

from gpautotune import Measurement, Status, TuningRun, tune
from gpautotune.exceptions import (
    BudgetError,
    ConfigError,
    EvaluationError,
    GPAutotuneError,
    SpaceError,
    StorageError,
)
from gpautotune.problems import BoothProblem, Problem
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal, check_run_name, trials_frame
from gpautotune.storage._records import space_changes
from gpautotune.strategies import make_strategy
from gpautotune.strategies.random_sample import RandomSampling
from gpautotune.tuner import RunNameError, run_spec

SPACE = Space([IntRange("x", -5, 5), IntRange("y", -5, 5)], constraints=["x + y <= 6"])


def quadratic(config):
    return (config["x"] - 2) ** 2 + (config["y"] + 1) ** 2


class FloatBooth(BoothProblem):
    """Booth whose evaluate returns plain floats (numpy ones for odd x1)."""

    def evaluate(self, config):
        value = super().evaluate(config).value
        return np.float32(value) if config["x1"] % 2 else value


def test_a_problem_returning_floats_is_tuned():
    result = tune(FloatBooth(), "sobol", 15, seed=0)
    assert all(t.status is Status.OK for t in result.trials)
    assert result.best_value == min(t.value for t in result.trials) >= 0


def test_a_plain_function_with_a_space_is_tuned(tmp_path):
    result = tune(quadratic, "random", 121, space=SPACE, seed=1, storage=tmp_path / "f.db")
    assert result.best_config == {"x": 2, "y": -1} and result.best_value == 0
    run = Journal(tmp_path / "f.db").get_run(result.run_id)
    assert run.problem == "quadratic" and run.status == "finished"


def test_a_function_needs_a_space_and_a_problem_none():
    with pytest.raises(ConfigError, match="space="):
        tune(quadratic, "random", 5)
    with pytest.raises(ConfigError, match="plain function"):
        tune(BoothProblem(), "random", 5, space=SPACE)
    with pytest.raises(ConfigError, match="Problem or a function"):
        tune(42, "random", 5)


def test_nan_and_failures_are_statuses_not_crashes():
    def objective(config):
        if config["x"] < 0:
            return Measurement.failure(Status.RUN_ERROR, "negative x is not supported")
        return float("nan") if config["x"] == 0 else quadratic(config)

    result = tune(objective, "random", 40, space=SPACE, seed=2)
    statuses = {t.status for t in result.trials}
    assert statuses == {Status.OK, Status.RUN_ERROR}
    nan = [t for t in result.trials if t.config["x"] == 0]
    assert nan and all("nan" in t.measurement.error for t in nan)


def test_the_same_exception_in_the_first_evaluations_stops_the_run(tmp_path):
    def buggy(config):
        return config["z"]  # KeyError on every configuration

    with pytest.raises(EvaluationError, match="KeyError: 'z' at test_tuner_api.py:") as info:
        tune(buggy, "random", 50, space=SPACE, seed=0, storage=tmp_path / "b.db")
    assert "a bug in the objective" in str(info.value) and "in buggy" in str(info.value)
    journal = Journal(tmp_path / "b.db")
    trials = journal.trials(1)
    assert len(trials) == 3 and all(t.status is Status.RUN_ERROR for t in trials)
    assert journal.get_run(1).status == "stopped"

    def buggy(config):  # fixed, same name, same run settings: a fresh run, all measured
        return quadratic(config)

    again = tune(buggy, "random", 50, space=SPACE, seed=0, storage=tmp_path / "b.db")
    assert again.run_id == 2 and again.used == 50 and all(t.ok for t in again.trials)


def test_different_or_occasional_exceptions_do_not_stop_the_run():
    def sometimes(config):
        if config["x"] > 0:
            raise ValueError(f"x={config['x']} is too large")  # a different message each x
        return quadratic(config)

    result = tune(sometimes, "random", 30, space=SPACE, seed=3)
    assert result.used == 30


def test_a_non_number_result_is_a_run_error_naming_the_fix():
    result = tune(lambda c: "fast", "random", 2, space=SPACE, seed=0)
    assert all(t.status is Status.RUN_ERROR for t in result.trials)
    assert "return a float or a gpautotune.Measurement" in result.trials[0].measurement.error


def test_results_of_one_wrong_type_stop_the_run_whatever_their_values():
    def with_metadata(config):  # a value and a dict, each call different
        return quadratic(config), {"x": config["x"]}

    with pytest.raises(EvaluationError, match="returned tuple; return a float"):
        tune(with_metadata, "random", 20, space=SPACE, seed=0)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: tune(quadratic, "random", None, space=SPACE), BudgetError, "needs a budget"),
        (lambda: tune(quadratic, "random", True, space=SPACE), BudgetError, "got True"),
        (lambda: tune(quadratic, "random", 4, space=SPACE, batch_size="2"), ConfigError, "'2'"),
        (lambda: TuningRun(SPACE, RandomSampling), ConfigError, "registered name"),
        (lambda: TuningRun(SPACE, None), ConfigError, "got None"),
        (lambda: TuningRun(SPACE, "random").ask(2.0), ConfigError, "ask"),
    ],
)
def test_arguments_of_the_wrong_type_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_strategy_instance_serves_one_run(tmp_path):
    strategy = make_strategy("gpr", SPACE, seed=0)
    tune(quadratic, strategy, 12, space=SPACE, seed=0, storage=tmp_path / "a.db")
    with pytest.raises(ConfigError, match="already told 12 trials"):
        tune(lambda c: quadratic(c) + 1, strategy, 12, space=SPACE, storage=tmp_path / "b.db")


def test_ask_tell_in_a_with_block_finishes_the_run(tmp_path):
    problem = BoothProblem()
    with TuningRun(problem, "sobol", storage=tmp_path / "r.db", seed=2, budget=6) as run:
        while not run.finished:
            for config in run.ask():
                run.tell(config, problem.evaluate(config).value)
    record = Journal(tmp_path / "r.db").get_run(run.run_id)
    assert record.status == "finished" and record.problem == "booth"
    assert run.used == 6


def test_the_last_tell_of_the_budget_finishes_the_run(tmp_path):
    run = TuningRun(SPACE, "random", storage=tmp_path / "r.db", seed=1, budget=3)
    for config in run.ask(3):
        run.tell(config, quadratic(config))
    assert Journal(tmp_path / "r.db").get_run(run.run_id).status == "finished"


def test_an_exception_in_the_with_block_leaves_the_run_resumable(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with TuningRun(SPACE, "random", storage=tmp_path / "r.db", seed=1, budget=9) as run:
            for config in run.ask(2):
                run.tell(config, quadratic(config))
            raise KeyboardInterrupt
    assert Journal(tmp_path / "r.db").get_run(run.run_id).status == "running"
    again = TuningRun(SPACE, "random", storage=tmp_path / "r.db", seed=1, budget=9)
    assert again.run_id == run.run_id and again.used == 2


def test_an_exhausted_strategy_finishes_an_ask_tell_run():
    small = Space([IntRange("a", 0, 2)])
    with TuningRun(small, "random", seed=0, budget=10) as run:
        while not run.finished:
            for config in run.ask():
                run.tell(config, float(config["a"]))
    assert run.used == 3 and run.finished


def test_a_bare_space_is_stored_under_the_given_problem_name(tmp_path):
    run = TuningRun(SPACE, "random", storage=tmp_path / "r.db", problem_name="my-kernel")
    assert Journal(tmp_path / "r.db").get_run(run.run_id).problem == "my-kernel"
    with pytest.raises(ConfigError, match="problem_name"):
        TuningRun(BoothProblem(), "random", problem_name="x")


def test_load_if_exists_false_refuses_to_resume(tmp_path):
    db = tmp_path / "r.db"
    tune(BoothProblem(), "random", 4, seed=1, storage=db, label="first")
    with pytest.raises(StorageError, match="already exists"):
        tune(BoothProblem(), "random", 4, seed=1, storage=db, label="first", load_if_exists=False)
    fresh = tune(BoothProblem(), "random", 4, seed=1, storage=db, label="second")
    assert fresh.run_id == 2


def test_a_run_resumed_on_another_space_is_refused_naming_the_change(tmp_path):
    db = tmp_path / "r.db"
    tune(quadratic, "random", 4, space=SPACE, seed=0, storage=db)
    narrowed = Space([IntRange("x", -5, 5), IntRange("y", -5, 5)], constraints=["x + y <= 2"])
    with pytest.raises(StorageError, match=r"constraint 'x \+ y <= 2' added.*another name"):
        tune(quadratic, "random", 6, space=narrowed, seed=0, storage=db)
    wider = Space([IntRange("x", -9, 5), IntRange("y", -5, 5)], constraints=["x + y <= 6"])
    with pytest.raises(StorageError, match="parameter 'x' changed"):
        tune(quadratic, "random", 6, space=wider, seed=0, storage=db)
    TuningRun(SPACE, "random", storage=db, seed=0, problem_name="mine").finish()
    with pytest.raises(StorageError, match="parameter 'x' changed"):
        TuningRun(wider, "random", storage=db, seed=0, problem_name="mine")
    assert len(Journal(db).trials(1)) == 4 and Journal(db).get_run(1).budget == 4
    other = tune(quadratic, "random", 6, space=narrowed, seed=0, storage=db, label="narrowed")
    assert other.run_id == 3 and all(t.config["x"] + t.config["y"] <= 2 for t in other.trials)
    assert tune(quadratic, "random", 6, space=SPACE, seed=0, storage=db).run_id == 1


def test_space_changes_ignore_fields_an_older_journal_lacks():
    now = SPACE.describe()
    old = {k: v for k, v in now.items() if k not in ("model_inputs", "derived")}
    assert space_changes(old, now) == []
    grown = Space([IntRange("x", -5, 5), IntRange("y", -5, 5), IntRange("z", 0, 1)])
    assert space_changes(now, grown.describe()) == [
        "parameter 'z' added",
        "constraint 'x + y <= 6' removed",
    ]


def test_a_name_used_with_other_settings_is_a_clash(tmp_path):
    db = tmp_path / "r.db"
    tune(BoothProblem(), "random", 4, seed=1, storage=db, label="baseline")
    journal = Journal(db)
    booth = BoothProblem()
    run = TuningRun(booth, "sobol", seed=1)
    same = run_spec(booth, TuningRun(booth, "random", seed=1).strategy, seed=1, label="baseline")
    other = run_spec(booth, run.strategy, seed=1, label="baseline")
    check_run_name(journal, same)  # its own run: resumed, not refused
    with pytest.raises(RunNameError, match=r"run 1 \(booth / random.*strategy random there"):
        check_run_name(journal, other)


def test_labels_appear_in_the_trials_frame(tmp_path):
    db = tmp_path / "r.db"
    tune(BoothProblem(), "random", 3, seed=1, storage=db, label="a")
    tune(BoothProblem(), "random", 3, seed=1, storage=db, label="b")
    frame = trials_frame(Journal(db))
    assert list(frame["label"]) == ["a"] * 3 + ["b"] * 3
    assert list(frame.columns[:5]) == ["run_id", "problem", "strategy", "label", "seed"]


def test_storage_urls_name_files_and_never_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = tune(BoothProblem(), "random", 3, seed=1, storage="sqlite:///runs/a.db")
    assert (tmp_path / "runs" / "a.db").is_file() and not (tmp_path / "sqlite:").exists()
    assert result.storage == "runs/a.db"
    absolute = tmp_path / "abs.db"
    tune(BoothProblem(), "random", 3, seed=1, storage=f"sqlite:///{absolute}")
    assert absolute.is_file()
    memory = tune(BoothProblem(), "random", 3, seed=1, storage="sqlite://")
    assert memory.storage == ":memory:"


@pytest.mark.parametrize(
    ("storage", "message"),
    [
        ("file:runs.db?mode=ro", "URI filename"),
        ("sqlite:///runs.db?timeout=5", "after '?'"),
        ("sqlite:/runs.db", "three slashes"),
        ("postgresql://user@host/db", "postgresql:// storages are not supported"),
        ("", "empty"),
    ],
)
def test_other_storage_strings_are_refused_clearly(tmp_path, monkeypatch, storage, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StorageError, match=message):
        tune(BoothProblem(), "random", 3, storage=storage)
    assert list(tmp_path.iterdir()) == []


def test_trials_are_logged_once_logging_is_configured(caplog):
    with caplog.at_level(logging.INFO, logger="gpautotune.tuner"):
        tune(BoothProblem(), "random", 3, seed=1)
    lines = [r.getMessage() for r in caplog.records if "trial" in r.getMessage()]
    assert len(lines) == 3 and "best" in lines[-1]


def test_progress_bar_on_request(capsys):
    tune(BoothProblem(), "random", 4, seed=1, progress=True)
    err = capsys.readouterr().err
    assert "tuning" in err and "4/4" in err


def test_problem_evaluate_may_be_declared_to_return_floats():
    class Sphere(Problem):
        name = "sphere"
        space = SPACE

        def evaluate(self, config):
            return config["x"] ** 2 + config["y"] ** 2

    assert tune(Sphere(), "random", 121, seed=0).best_value == 0


def test_a_budget_below_the_stored_trials_is_refused(tmp_path):
    db = tmp_path / "r.db"
    tune(quadratic, "random", 6, space=SPACE, seed=0, storage=db)
    with pytest.raises(BudgetError, match="has 6 trials; a budget of 3 would leave 3"):
        tune(quadratic, "random", 3, space=SPACE, seed=0, storage=db)
    assert Journal(db).get_run(1).budget == 6
    assert tune(quadratic, "random", 6, space=SPACE, seed=0, storage=db).used == 6


@pytest.mark.parametrize("value", ["2", b"2", True, None, float("nan")])
def test_an_ok_measurement_needs_a_finite_number(value):
    with pytest.raises(ValueError, match="an ok measurement needs a"):
        Measurement.success(value)


@pytest.mark.parametrize("status", [Status.OK, "ok", "bogus"])
def test_a_failure_needs_a_failure_status(status):
    with pytest.raises(ValueError, match="Measurement.failure needs a failure status"):
        Measurement.failure(status, "hm")


def test_an_ask_blocked_by_a_configuration_never_told_says_so(tmp_path):
    """The documented loop asked forever (ask() gave [] and the run was not finished)
    when one configuration asked was never told, e.g. after a tell that raised."""
    with TuningRun(SPACE, "random", storage=tmp_path / "r.db", seed=1, budget=4) as run:
        lost = run.ask()[0]
        with pytest.raises(ConfigError):
            run.tell(lost, None)  # caught by the user, who goes on
        assert run.pending == [lost]
        run.pending[0]["x"] = 99  # copies
        with pytest.raises(GPAutotuneError, match=r"1 configuration asked and not told \(\{"):
            for _ in range(10):  # the documented `while not run.finished`, bounded
                for config in run.ask():
                    run.tell(config, quadratic(config))
        assert run.used == 3 and run.pending == [lost]
        run.tell(lost, Measurement.failure(Status.RUN_ERROR, "crashed"))
        assert run.finished and run.pending == []


def test_asks_before_telling_get_what_the_budget_leaves(tmp_path):
    run = TuningRun(SPACE, "random", storage=tmp_path / "r.db", seed=1, budget=5)
    first, second = run.ask(3), run.ask(3)  # a batch, then more before telling it
    assert len(first) == 3 and len(second) == 2 and len(run.pending) == 5
    assert run.ask() == []  # an asynchronous loop's: its evaluations are in flight
    run.tell(first[0], quadratic(first[0]))
    assert run.ask() == [] and run.ask(0) == []  # told between: still waiting
    with pytest.raises(GPAutotuneError, match="4 configurations asked and not told"):
        run.ask()  # nothing told since the last: asked forever otherwise
    assert run.ask(2, record_running=True) == []  # in flight: wait
    for config in first[1:] + second:
        run.tell(config, quadratic(config))
    assert run.finished and run.ask() == []
    small = TuningRun(Space([IntRange("a", 0, 2)]), "random", seed=0, budget=10)
    asked = small.ask(5)
    assert len(asked) == 3 and small.ask() == []  # budget left: the strategy is out
    for config in asked:
        small.tell(config, 1.0)
    assert small.ask() == [] and small.finished


def test_after_finish_nothing_is_asked_and_only_what_was_asked_is_told(tmp_path):
    db = tmp_path / "r.db"
    with TuningRun(SPACE, "random", storage=db, seed=1, budget=6) as run:
        run.tell(run.ask()[0], 1.0)
        in_flight = run.ask(2)  # a batch, or evaluations in flight, when a callback stops
        run.finish()
        assert run.ask() == [] and run.ask(3, record_running=True) == []
        unasked = next(c for c in ({"x": x, "y": 0} for x in range(9)) if c not in in_flight)
        with pytest.raises(GPAutotuneError, match="run 1 is finished; open it again"):
            run.tell(unasked, 1.0)
        for config in in_flight:  # measured: stored, not lost
            run.tell(config, 2.0)
    assert Journal(db).count_trials(run.run_id) == 3
    again = TuningRun(SPACE, "random", storage=db, seed=1, budget=6)
    assert again.run_id == run.run_id and len(again.ask()) == 1


class _NoSpace(Problem):
    name = "no-space"

    def evaluate(self, config):
        return 1.0


class _ListSpace(_NoSpace):
    space = [IntRange("x", 0, 3)]


class _Unnamed(Problem):
    space = SPACE

    def evaluate(self, config):
        return quadratic(config)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda db: tune(_NoSpace(), "random", 3, storage=db), "the problem has no `space`"),
        (lambda db: tune(_ListSpace(), "random", 3, storage=db), "`space` is a list, not a"),
        (lambda db: tune(_Unnamed, "random", 3, storage=db), r"pass an instance, _Unnamed\(\)"),
        (
            lambda db: tune(_Unnamed, "random", 3, space=SPACE, storage=db),
            "_Unnamed is a Problem class",
        ),
        (lambda db: TuningRun(_NoSpace(), "random", storage=db), "has no `space`"),
        (lambda db: TuningRun(_Unnamed, "random", storage=db), "is a Problem class"),
    ],
)
def test_a_problem_class_or_one_without_a_space_is_refused_up_front(tmp_path, call, message):
    with pytest.raises(ConfigError, match=message):
        call(tmp_path / "p.db")
    assert not (tmp_path / "p.db").exists()  # nothing evaluated, no run opened


def test_parallel_arguments_are_checked_before_the_run_opens(tmp_path):
    import threading

    db = tmp_path / "w.db"
    for workers in (0, -1, 2.5):
        with pytest.raises(ConfigError, match="workers must be a positive integer"):
            tune(quadratic, "random", 4, space=SPACE, storage=db, workers=workers)
    lock = threading.Lock()

    def holds_a_lock(config):
        with lock:
            return quadratic(config)

    with pytest.raises(ConfigError, match="cannot be sent to Dask workers"):
        tune(holds_a_lock, "random", 4, space=SPACE, storage=db, workers=2)
    assert Journal(db).runs() == []  # no run left 'running'


def test_a_warm_start_outside_the_space_is_refused_and_a_new_one_on_resume_is_warned(tmp_path):
    earlier = tune(quadratic, "random", 6, space=SPACE, seed=3)
    narrow = Space([IntRange("x", -5, 5), IntRange("y", -5, 5)], constraints=["x + y >= 4"])
    with pytest.raises(SpaceError, match=r"warm_start: \d of 6 trials break .*'x \+ y >= 4'"):
        tune(
            quadratic,
            "random",
            4,
            space=narrow,
            storage=tmp_path / "w.db",
            warm_start=earlier.trials,
        )
    assert Journal(tmp_path / "w.db").runs() == []
    db = tmp_path / "r.db"
    tune(quadratic, "random", 4, space=SPACE, seed=0, storage=db, warm_start=earlier.trials[:2])
    with pytest.warns(UserWarning, match="warm_start given is not used"):
        tune(quadratic, "random", 5, space=SPACE, seed=0, storage=db, warm_start=earlier.trials)
    assert len(Journal(db).trials(1)) == 2 + 5


def test_an_objective_a_worker_process_cannot_receive_is_refused_before_the_run_opens(tmp_path):
    from gpautotune.execution import IsolatedEvaluator

    db = tmp_path / "i.db"
    isolated = IsolatedEvaluator(timeout_s=2)
    with pytest.raises(ConfigError, match=r"not picklable.*not a lambda.*leave out evaluator="):
        tune(lambda c: 1.0, "random", 4, space=SPACE, storage=db, evaluator=isolated)
    assert Journal(db).runs() == [] and isolated.workers_started == 0


def test_resuming_is_said_at_warning_level_and_so_is_a_budget_all_stored(tmp_path, caplog):
    db = tmp_path / "r.db"
    warm = tune(quadratic, "random", 2, space=SPACE, seed=3).trials
    with caplog.at_level(logging.WARNING, logger="gpautotune.tuner"):
        tune(quadratic, "random", 4, space=SPACE, seed=0, storage=db, warm_start=warm)
        assert caplog.records == []  # a new run (its warm start stored first)
        tune(quadratic, "random", 6, space=SPACE, seed=0, storage=db)
        tune(quadratic, "random", 6, space=SPACE, seed=0, storage=db)
    first, second = (r for r in caplog.records if r.levelno == logging.WARNING)
    assert first.getMessage() == f"run 1 of {str(db)!r}: resuming with 6 stored trials"
    assert "resuming with all 6 evaluations of its budget stored; nothing is measured" in (
        second.getMessage()
    )


@pytest.mark.parametrize("how", [{"batch_size": 3}, {"workers": 3}])
def test_a_callback_that_finishes_the_run_stops_tune_keeping_what_was_measured(tmp_path, how):
    def stop(trial, run):
        if trial.number == 1:
            run.finish()

    result = tune(
        quadratic,
        "random",
        12,
        space=SPACE,
        storage=tmp_path / "r.db",
        seed=2,
        callback=stop,
        **how,
    )
    stored = Journal(tmp_path / "r.db").count_trials(result.run_id)
    assert 2 <= len(result.trials) == stored < 12
