"""The first identical build errors of a run stop ``tune`` (a set-up mistake), with
every measured trial stored; legitimate build failures do not."""

from __future__ import annotations

import contextlib
import itertools

import pytest

from gpautotune import Measurement, Status, TuningRun, tune
from gpautotune.exceptions import EvaluationError
from gpautotune.parallel import SimulatedWorkers, run_parallel
from gpautotune.problems.kt_cache import kt_cache_problem
from gpautotune.space import IntRange, Space
from gpautotune.storage import Journal
from gpautotune.tuner import FIRST_BUILD_ERRORS
from gpautotune.tuner._tune import _after_each_trial
from tests.storage.kt_files import small_cache, write_json

SPACE = Space([IntRange("x", -5, 5), IntRange("y", -5, 5)])
TYPO = "k.c: In function 'k':\nk.c:3:4: error: 'tile' undeclared\n"


def _build_error(text: str = TYPO) -> Measurement:
    return Measurement.failure(Status.BUILD_ERROR, text)


def test_identical_first_build_errors_stop_the_run_with_its_trials_stored(tmp_path):
    with pytest.raises(EvaluationError) as info:
        tune(lambda c: _build_error(), "random", 40, space=SPACE, seed=0, storage=tmp_path / "j.db")
    message = str(info.value)
    assert message.startswith(f"the first {FIRST_BUILD_ERRORS} configurations all failed")
    assert "(k.c: In function 'k':)" in message and "set aside" in message
    journal = Journal(tmp_path / "j.db")
    assert len(journal.trials(1)) == FIRST_BUILD_ERRORS
    assert journal.get_run(1).status == "stopped"
    journal.close()

    again = tune(
        lambda c: c["x"] ** 2, "random", 10, space=SPACE, seed=0, storage=tmp_path / "j.db"
    )
    assert again.run_id == 2 and again.used == 10  # fixed: a fresh run


def test_temporary_file_names_and_addresses_do_not_make_errors_differ():
    names = (
        f"/tmp/cc{i}Xy{i}.o: in function `main':\nh.c:(.text+0x{i}c): undefined" for i in range(9)
    )
    with pytest.raises(EvaluationError, match="a set-up mistake"):
        tune(lambda c: _build_error(next(names)), "random", 40, space=SPACE, seed=0)


@pytest.mark.parametrize(
    "outcome",  # of the i-th evaluation
    [
        pytest.param(lambda i, c: _build_error(f"error: tile {c['x']} too large"), id="different"),
        pytest.param(lambda i, c: _build_error(" \n"), id="no text"),
        pytest.param(lambda i, c: 1.0 if i == 2 else _build_error(), id="a success among them"),
        pytest.param(lambda i, c: 1.0 if i == 0 else _build_error(), id="a success before"),
        pytest.param(
            lambda i, c: Measurement.failure(Status.RUN_ERROR, TYPO) if i == 4 else _build_error(),
            id="another failure",
        ),
    ],
)
def test_build_errors_that_may_be_legitimate_do_not_stop_the_run(outcome):
    calls = itertools.count()
    assert tune(lambda c: outcome(next(calls), c), "random", 12, space=SPACE, seed=0).used == 12


def test_the_rest_of_a_batch_is_not_measured_once_the_run_stops():
    measured = []

    def objective(config):
        measured.append(config)
        return _build_error()

    with pytest.raises(EvaluationError):
        tune(objective, "random", 40, space=SPACE, seed=0, batch_size=3)
    assert len(measured) == FIRST_BUILD_ERRORS


class _Typo:
    """A problem whose every build fails alike (for the simulated workers)."""

    space = SPACE

    def evaluate(self, config):
        return _build_error()


def test_evaluations_in_flight_are_stored_when_an_asynchronous_run_stops(tmp_path):
    run = TuningRun(SPACE, "random", storage=tmp_path / "j.db", seed=0, budget=40)
    durations = itertools.count(1)
    workers = SimulatedWorkers(_Typo(), 3, lambda m: next(durations))
    with contextlib.ExitStack() as stack:
        run_parallel(run, workers, _after_each_trial(stack, run, None, False))
    assert run.set_aside_because is not None and "set aside" in run.set_aside_because
    assert len(run.trials) == FIRST_BUILD_ERRORS + 2  # the two in flight at the stop too
    journal = Journal(tmp_path / "j.db")
    assert len(journal.trials(run.run_id)) == len(run.trials)
    assert journal.get_run(run.run_id).status == "stopped" and not journal.running(run.run_id)
    assert run.ask(3) == []
    journal.close()


def test_a_replayed_cache_whose_first_rows_failed_to_build_is_not_stopped(tmp_path):
    """A replayed table's failures carry one marker each (CompilationFailedConfig): they
    are the table's data, not a set-up mistake, however many come first."""
    document = small_cache()
    for record in document["cache"].values():  # all but the fastest fail to build
        if record["block_size_x"] != 128 or record["tile-size"] != 1:
            record["time"] = "CompilationFailedConfig"
    path = write_json(tmp_path / "c.json", document)
    problem = kt_cache_problem(path)
    assert problem.space.size > 12
    result = tune(problem, "random", 12, seed=0, storage=tmp_path / "j.db")
    assert result.used == 12
    assert sum(t.status is Status.BUILD_ERROR for t in result.trials) >= FIRST_BUILD_ERRORS


def test_a_paced_replay_answers_from_its_tables_data(tmp_path):
    """Its digest is the replayed table's: failures stay data, a resume on another
    table is refused."""
    from gpautotune.problems.paced import PacedProblem

    path = write_json(tmp_path / "c.json", small_cache())
    inner = kt_cache_problem(path)
    paced = PacedProblem(inner, scale=1e-6, max_s=1e-6, failure_s=0.0)
    assert paced.data_digest() == inner.data_digest() is not None
