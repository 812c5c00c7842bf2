""":func:`tune`: a whole run, sequential or on Dask workers, with its stopping rules."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gpautotune.exceptions import BudgetError, ConfigError, EvaluationError
from gpautotune.execution import Evaluator
from gpautotune.problems import Problem
from gpautotune.problems.function import Objective, as_problem
from gpautotune.space import Space
from gpautotune.strategies import Strategy
from gpautotune.trial import Trial
from gpautotune.tuner._checks import check_problem_instance, positive_int
from gpautotune.tuner._result import TuneResult
from gpautotune.tuner._run import StorageLike, TuningRun
from gpautotune.tuner._stops import FIRST_BUILD_ERRORS, FIRST_CRASHES, first_failures
from gpautotune.tuner._warm_start import import_trials

__all__ = ["FIRST_BUILD_ERRORS", "FIRST_CRASHES", "tune"]


def tune(
    problem: Problem | Objective,
    strategy: Strategy | str,
    budget: int,
    *,
    space: Space | None = None,
    storage: StorageLike = None,
    seed: int | None = None,
    strategy_options: Mapping[str, Any] | None = None,
    warm_start: Sequence[Trial] | str | os.PathLike[str] | None = None,
    batch_size: int = 1,
    evaluator: Evaluator | None = None,
    callback: Callable[[Trial, TuningRun], None] | None = None,
    label: str | None = None,
    load_if_exists: bool = True,
    progress: bool = False,
    workers: int | None = None,
    client: Any = None,
) -> TuneResult:
    """Minimise ``problem`` with ``strategy`` for ``budget`` evaluations.

    Re-running with the same problem, strategy, seed and storage resumes the stored run.
    ``callback(trial, run)`` is called after each stored trial (progress bars, logging).
    With ``workers`` (a local Dask cluster of that many processes) or ``client`` (a
    ``distributed.Client``), evaluations run asynchronously on Dask, one per worker slot
    (:mod:`gpautotune.parallel`); each worker uses the problem's default evaluator.

    The run stops early, set aside in the journal with its trials, when its first
    evaluations point at a mistake rather than at the configurations: the first
    :data:`FIRST_CRASHES` all raised the same exception, or the first
    :data:`FIRST_BUILD_ERRORS` all failed to build with the same error
    (:mod:`gpautotune.tuner._stops`). Every evaluation measured is stored first, those
    in flight on workers at the stop included.

    Args:
        problem: a :class:`Problem`, or a function ``f(config) -> float`` with ``space``.
        strategy: a strategy instance or a registered name (``gpr``, ``random``, ...).
        budget: evaluations, failures included.
        space: the configurations of a plain function (not with a Problem).
        storage: a journal path, ``sqlite:///`` URL or :class:`Journal`; None: in memory.
        seed: the run's seed.
        strategy_options: options of a strategy given by name.
        warm_start: earlier trials told to the strategy first (not counted in the budget),
            or a file of them: a CSV or Parquet table, a T4 results file or a Kernel Tuner
            cache (read by :func:`import_trials` for the problem, its units converted).
        batch_size: configurations asked at a time.
        evaluator: how ``problem.evaluate`` is called (default: the problem's).
        callback: ``callback(trial, run)`` after each stored trial.
        label: the run's name: one a run of the problem has with another strategy or
            other options is refused (see :class:`TuningRun`).
        load_if_exists: resume a stored run (True) or raise :class:`StorageError`.
        progress: draw a progress bar on standard error.
        workers: evaluate on a local Dask cluster of this many worker processes.
        client: evaluate on the workers of this ``distributed.Client``.

    Raises:
        RunNameError: ``label`` is taken by a run of the problem with another strategy
            or other options (nothing stored).
        EvaluationError: the run stopped early (the message says why, and where its
            trials are).
        ConfigError: ``evaluator`` or ``batch_size`` with ``workers`` or ``client``; a
            warm-start file that cannot be read for this problem (the message names it);
            a Problem class given for an instance, or a Problem without a ``space``.
        SpaceError: the space's constraints admit no configuration.
    """
    if not positive_int(budget):
        raise BudgetError(
            f"tune needs a budget: a positive integer number of evaluations, got {budget!r} "
            "(TuningRun runs without one)"
        )
    if not positive_int(batch_size):
        raise ConfigError(f"batch_size must be a positive integer, got {batch_size!r}")
    parallel = workers is not None or client is not None
    if parallel and (evaluator is not None or batch_size != 1):
        raise ConfigError(
            "evaluator and batch_size apply to sequential tuning; with workers, each worker"
            " evaluates one configuration at a time with the problem's default evaluator"
        )
    if workers is not None and not positive_int(workers):
        raise ConfigError(f"workers must be a positive integer, got {workers!r}")
    if workers is not None and client is not None:
        raise ConfigError("give workers (a local Dask cluster) or client, not both")
    check_problem_instance(problem)  # a Problem class or one without a space: before anything
    problem = as_problem(problem, space)
    if isinstance(warm_start, str | os.PathLike):  # a file: read before the set-up check
        warm_start = import_trials(warm_start, problem)
    problem.check()  # a set-up that cannot measure anything fails here, not trial by trial
    if evaluator is not None:  # e.g. a function a worker process cannot receive
        evaluator.check(problem)
    if parallel:  # before the run opens: a run left 'running' would read as unfinished
        from gpautotune.parallel import problem_payload

        problem_payload(problem)
    run = TuningRun(
        problem,
        strategy,
        storage=storage,
        seed=seed,
        budget=budget,
        strategy_options=strategy_options,
        warm_start=warm_start,
        label=label,
        load_if_exists=load_if_exists,
    )
    with contextlib.ExitStack() as stack:
        stack.callback(run.release)  # however the run ends (a retried task resumes it)
        stack.callback(run.strategy.close)
        told = _after_each_trial(stack, run, callback, progress)
        if parallel:
            from gpautotune.parallel import tune_on_dask

            tune_on_dask(run, problem, workers=workers, client=client, callback=told)
        else:
            evaluator = evaluator or problem.default_evaluator()
            stack.callback(evaluator.close)
            while not run.finished:
                for config in run.ask(min(batch_size, run.remaining)):
                    ev = evaluator(problem, config)
                    told(
                        run.tell(
                            config,
                            ev.measurement,
                            started_at=ev.started_at,
                            duration_s=ev.duration_s,
                        ),
                        run,
                    )
                    if run.set_aside_because is not None:
                        break  # the rest of the batch is not measured
        run.finish()
    if run.set_aside_because is not None:
        raise EvaluationError(run.set_aside_because)
    return TuneResult(run.run_id, list(run.trials), budget, run.journal.path)


def _after_each_trial(
    stack: contextlib.ExitStack,
    run: TuningRun,
    callback: Callable[[Trial, TuningRun], None] | None,
    progress: bool,
) -> Callable[[Trial, TuningRun], None]:
    """What :func:`tune` does once a trial is stored: set the run aside when its first
    failures say so (:func:`first_failures`; :func:`tune` then raises, once the
    evaluations in flight are stored), then move the progress bar (entered on
    ``stack``) and call ``callback``."""
    if progress:
        callback = _with_bar(stack, run, callback)

    def told(trial: Trial, r: TuningRun) -> None:
        if r.set_aside_because is None:
            why = first_failures(r)
            if why is not None:
                r.set_aside(why)
        if callback is not None:
            callback(trial, r)

    return told


def _with_bar(
    stack: contextlib.ExitStack,
    run: TuningRun,
    callback: Callable[[Trial, TuningRun], None] | None,
) -> Callable[[Trial, TuningRun], None]:
    """``callback`` that also moves a progress bar entered on ``stack``."""
    from gpautotune.progress import ProgressBar, best_text

    bar = stack.enter_context(ProgressBar("tuning", run.budget))
    bar.update(run.used, status=best_text(run.best.value if run.best else None))

    def both(trial: Trial, r: TuningRun) -> None:
        bar.update(r.used, status=best_text(r.best.value if r.best else None))
        if callback is not None:
            callback(trial, r)

    return both
