"""The tuning run: ask/tell with the journal owning every trial (see the package docs)."""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpautotune.exceptions import (
    BudgetError,
    ConfigError,
    GPAutotuneError,
    StorageError,
)
from gpautotune.measurement import Measurement
from gpautotune.problems import Problem
from gpautotune.problems.function import FunctionProblem
from gpautotune.space import Config, Space
from gpautotune.storage import (
    Journal,
    RunningTrial,
    trials_frame,
)
from gpautotune.strategies import Proposal, Strategy, make_strategy
from gpautotune.trial import Origin, Trial
from gpautotune.tuner._checks import (
    check_budget,
    check_problem_instance,
    check_space,
    check_warm_start,
    positive_int,
    warm_configs,
)
from gpautotune.tuner._identity import run_spec
from gpautotune.tuner._result import best_trial
from gpautotune.tuner._warm_start import import_trials

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TuningRun"]

_log = logging.getLogger("gpautotune.tuner")
StorageLike = Journal | str | os.PathLike[str] | None


def _journal(storage: StorageLike) -> Journal:
    if isinstance(storage, Journal):
        return storage
    return Journal(":memory:" if storage is None else storage)


class TuningRun:
    """A resumable run with an ask/tell API, for code that runs its own evaluations.

    Example::

        with TuningRun(problem, "sobol", storage="runs.db", seed=1, budget=20) as run:
            while not run.finished:
                for config in run.ask():
                    run.tell(config, my_measure(config))   # a float or a Measurement

    The run is finished (marked so in the journal, where reports look for finished runs)
    when its budget is used, when the strategy has nothing more to propose, when
    :meth:`finish` is called, or when its ``with`` block ends without an exception. An
    exception leaves it unfinished: opening it again resumes it.

    Args:
        target: the :class:`Problem` (or only a :class:`Space` when you evaluate yourself).
        strategy: a strategy instance or a registered name.
        storage: a :class:`Journal`, a database path or ``sqlite:///`` URL, or None (in
            memory).
        seed: the run's seed (also the strategy's when built by name).
        budget: evaluations allowed, failures included; None for no limit.
        strategy_options: keyword options of a strategy given by name.
        warm_start: earlier trials told to the strategy first (not counted in the budget),
            or a file of them (:func:`~gpautotune.tuner.import_trials`).
        label: the run's name, as a study's name is in Optuna: it names a strategy with
            its options on a problem, and distinguishes otherwise identical runs. Runs
            may share it across seeds (repetitions, as a comparison's do) and problems; a
            run of the problem with another strategy or other options under it is
            refused.
        load_if_exists: resume the run when the journal holds it (the default); False
            raises :class:`StorageError` instead, as Optuna's ``load_if_exists=False``.
        problem_name: the problem's name in the journal when ``target`` is a bare
            :class:`Space` (default: the space's name, else ``custom``).

    Raises:
        RunNameError: ``label`` is taken by a run of the problem with another strategy
            or other options (the message says which, and what differs); nothing is
            stored.
        StorageError: the run exists and ``load_if_exists`` is False.
        SpaceError: the space's constraints admit no configuration.
        ConfigError: a Problem class given for an instance, or a Problem without a
            ``space``.
    """

    def __init__(
        self,
        target: Problem | Space,
        strategy: Strategy | str,
        *,
        storage: StorageLike = None,
        seed: int | None = None,
        budget: int | None = None,
        strategy_options: Mapping[str, Any] | None = None,
        warm_start: Sequence[Trial] | str | os.PathLike[str] | None = None,
        label: str | None = None,
        load_if_exists: bool = True,
        problem_name: str | None = None,
    ) -> None:
        if budget is not None and not positive_int(budget):
            raise BudgetError(f"budget must be a positive integer, got {budget!r}")
        check_problem_instance(target)
        if problem_name is not None and isinstance(target, Problem):
            raise ConfigError("problem_name names a bare Space; a Problem has its own name")
        self.problem = target if isinstance(target, Problem) else None
        self.space = target.space if isinstance(target, Problem) else target
        check_space(self.space)  # before the strategy is built or the journal opened
        if isinstance(warm_start, str | os.PathLike):  # a file of trials, read first
            warm_start = import_trials(warm_start, target)
        if warm_start:
            check_warm_start(self.space, warm_start)
        if not isinstance(strategy, str | Strategy):
            raise ConfigError(
                f"strategy must be a registered name ('gpr', 'random', ...) or a Strategy "
                f"instance (make_strategy(name, space)), got {strategy!r}"
            )
        if isinstance(strategy, str):
            strategy = make_strategy(
                strategy, self.space, seed=seed, **dict(strategy_options or {})
            )
        elif strategy_options:
            raise ConfigError("strategy_options only apply to a strategy given by name")
        elif strategy.trials:
            raise ConfigError(
                f"the strategy instance was already told {len(strategy.trials)} trials (of "
                "another run, or this one): a run needs a fresh instance, or the "
                "strategy's name"
            )
        elif set(strategy.space.names) != set(self.space.names):
            raise ConfigError(
                f"the strategy was made for the parameters {strategy.space.names}, the "
                f"problem has {self.space.names}: make it for the problem's space "
                "(make_strategy(name, problem.space)) or give its name"
            )
        self.strategy = strategy
        self.budget = budget
        strategy.plan(budget)
        self._owns_journal = not isinstance(storage, Journal)
        self.journal = _journal(storage)
        spec = run_spec(target, strategy, seed=seed, label=label, problem_name=problem_name)
        existing = self.journal.find(spec)
        if existing is not None and not load_if_exists:
            raise StorageError(
                f"run {existing.id} ({spec.describe()}) already exists in "
                f"{self.journal.path!r}; resume it (load_if_exists=True, or without "
                "--no-resume) or give the new run another label (--name)"
            )
        if existing is not None and budget is not None:
            check_budget(self.journal, existing, budget)
        if label is None and self.journal.path != ":memory:":
            _warn_unidentified(self.problem)
        self.record = self.journal.open_run(spec, budget, unique_name=True)
        self.run_id = self.record.id
        self.journal.claim_run(self.run_id)  # before anything is measured for it
        self.trials: list[Trial] = self.journal.trials(self.run_id)
        resumed = bool(self.trials)  # before a warm start is stored
        if not self.trials and warm_start:
            self._store_warm_start(warm_start)
        elif warm_start and warm_configs(self.trials) != warm_configs(warm_start, every=True):
            warnings.warn(
                f"run {self.run_id} resumes with its stored trials: the warm_start given is "
                "not used (a run's warm start is stored when it begins; give the new run "
                "another label to start from it)",
                stacklevel=2,
            )
        self._measured = {self.strategy._key(t.config) for t in self.trials}
        self._pending: dict[Any, Proposal] = {}
        #: Proposals of a batch interrupted by a kill, or in flight on workers when the
        #: run stopped (:attr:`recovered`), measured before anything new.
        self._queued: list[Proposal] = []
        self._running: dict[Any, int] = {}  # key -> id of its running record
        self._finished = False
        self._closed = False  # finish() ran: nothing more is asked, only pending told
        self._blocked_at: int | None = None  # trials told at an ask the untold blocked
        self._set_aside: str | None = None
        if resumed:
            self._say_resumed()
        if self.trials:
            self._resume(self.trials)
        #: The running records of evaluations in flight when the run stopped (asynchronous
        #: runs): :meth:`ask` hands their configurations out first, with their info.
        self.recovered = self._recover()

    def _say_resumed(self) -> None:
        """A WARNING that the run resumes (its results are the stored run's, perhaps with
        nothing measured now), as Optuna says it uses an existing study."""
        where = f"run {self.run_id} of {self.journal.path!r}"
        if self.remaining == 0:
            _log.warning(
                "%s: resuming with all %d evaluations of its budget stored; nothing is "
                "measured (a larger budget extends it, another label starts a new run)",
                where,
                self.used,
                extra={"resumed_run": self.run_id},
            )
        else:
            _log.warning(
                "%s: resuming with %d stored trials",
                where,
                len(self.trials),
                extra={"resumed_run": self.run_id},
            )

    def _recover(self) -> list[RunningTrial]:
        """Queue the configurations the journal records as running and not measured."""
        recovered = []
        for record in self.journal.running(self.run_id):
            key = self.strategy._key(record.config)
            if key in self._measured or key in self._running:
                continue
            self._running[key] = record.id
            if key not in self._pending:  # else: a proposal of an interrupted batch too
                proposal = Proposal(dict(record.config), dict(record.info))
                self._pending[key] = proposal
                self._queued.append(proposal)
            recovered.append(record)
        if recovered:
            _log.info(
                "run %d: %d evaluations in flight to measure again", self.run_id, len(recovered)
            )
        return recovered

    def _resume(self, trials: Sequence[Trial]) -> None:
        """Tell the stored trials; the proposals of an unfinished last batch are asked
        again from the trials stored before it, and queued."""
        batch = trials[-1].info.get("batch")
        start, size = batch if isinstance(batch, list) and len(batch) == 2 else (0, 0)
        if not 0 <= start < len(trials) < start + size:
            self.strategy.tell(trials)
            return
        self.strategy.tell(trials[:start])
        again = self.strategy.ask(size)
        self.strategy.tell(trials[start:])
        for proposal in again:
            key = self.strategy._key(proposal.config)
            if key not in self._measured:
                proposal = Proposal(proposal.config, {**proposal.info, "batch": [start, size]})
                self._pending[key] = proposal
                self._queued.append(proposal)
        _log.info("run %d: %d proposals of the interrupted batch left", self.run_id, len(again))

    def _store_warm_start(self, warm_start: Sequence[Trial]) -> None:
        warm = [
            Trial(
                i,
                dict(t.config),
                t.measurement,
                dict(t.info),
                t.started_at,
                t.duration_s,
                Origin.WARM_START,
            )
            for i, t in enumerate(warm_start)
        ]
        self.journal.add_trials(self.run_id, warm)
        self.trials = list(warm)

    def __enter__(self) -> TuningRun:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        """Finish the run unless the block raised; release what the strategy holds (a
        peer's thread or files) and close a journal opened by path."""
        try:
            if kind is None:
                self.finish()
            else:
                self.release()
        finally:
            self.strategy.close()
            if self._owns_journal and self.journal.path != ":memory:":
                self.journal.close()

    @property
    def used(self) -> int:
        """Evaluations counted in the budget so far."""
        return sum(t.counts_in_budget for t in self.trials)

    @property
    def remaining(self) -> int | None:
        return None if self.budget is None else max(self.budget - self.used, 0)

    @property
    def finished(self) -> bool:
        """The budget is used, the strategy ran out of proposals, or :meth:`finish` or
        :meth:`set_aside` ran."""
        return self._finished or self.remaining == 0

    @property
    def pending(self) -> list[Config]:
        """The configurations :meth:`ask` handed out and not told yet (copies), in the
        order asked."""
        queued = {id(p) for p in self._queued}  # not handed out yet
        return [dict(p.config) for p in self._pending.values() if id(p) not in queued]

    @property
    def best(self) -> Trial | None:
        return best_trial(self.trials)

    @property
    def set_aside_because(self) -> str | None:
        """Why :meth:`set_aside` stopped the run, or None."""
        return self._set_aside

    def set_aside(self, why: str) -> None:
        """Stop the run and set it aside in the journal: status ``stopped``, its trials
        kept, its key freed (the same settings then start a fresh run). Nothing more is
        asked; evaluations already in flight are still told, so that every measured one
        is stored."""
        if self._set_aside is None:
            self.journal.set_aside_run(self.run_id)
            self._set_aside, self._finished, self._queued = why, True, []

    def ask(self, n: int = 1, *, record_running: bool = False) -> list[Config]:
        """Up to ``n`` configurations to evaluate (never more than the budget left, the
        configurations asked and not told yet included).

        The proposals of an interrupted batch, and the configurations in flight when the
        run stopped (:attr:`recovered`), come first: alone (the strategy is asked again
        once they are told, as in the uninterrupted run), or, with ``record_running``,
        followed by the strategy's, which is given every configuration not told yet as
        pending. An empty list with nothing pending means the strategy has nothing more to
        propose: the run is then finished.

        Args:
            n: how many.
            record_running: record each configuration in the journal as running before
                returning it (asynchronous loops, with evaluations in flight between asks),
                so that a run killed while it is evaluated measures it again when resumed,
                once. Such asks are not batches: their proposals carry no ``batch`` record.
                They return an empty list while only the evaluations in flight stand in
                the way.

        An empty list also comes once :meth:`finish` or :meth:`set_aside` ran.

        Raises:
            GPAutotuneError: unless ``record_running``, the configurations asked and not
                told yet (:attr:`pending`) hold all the budget left at two asks in a row
                with nothing told between them (a loop that lost one would otherwise ask
                forever; the first such ask gives an empty list, as to a loop whose
                evaluations are still in flight).
        """
        if not positive_int(n, zero=True):
            raise ConfigError(f"ask(n): n must be a whole number of configurations, got {n!r}")
        if self._closed or self._set_aside is not None:
            return []
        wanted = n
        if self.remaining is not None:  # pending proposals not yet handed out do not count
            n = min(n, self.remaining - len(self._pending) + len(self._queued))
        if n <= 0:
            if wanted and self.remaining and not record_running:
                if self._blocked_at == len(self.trials):
                    raise self._untold()
                self._blocked_at = len(self.trials)
            return []
        out, self._queued = self._queued[:n], self._queued[n:]
        if out and not record_running:  # an interrupted batch first, alone
            return [dict(p.config) for p in out]
        out += self._ask_strategy(n - len(out), batch=not record_running)
        if record_running:
            self._record_running(out)
        if not out and not self._pending:
            _log.info("strategy %s has nothing more to propose", self.strategy.name)
            self._finish()
        return [dict(p.config) for p in out]

    def _untold(self) -> GPAutotuneError:
        """The error of an ask that configurations not told yet keep from the budget."""
        asked = self.pending
        if len(asked) == 1:
            return GPAutotuneError(
                f"1 configuration asked and not told ({asked[0]}); tell it a value or "
                "Measurement.failure(...) before asking for more"
            )
        return GPAutotuneError(
            f"{len(asked)} configurations asked and not told (the first: {asked[0]}); tell "
            "each a value or Measurement.failure(...) before asking for more"
        )

    def _ask_strategy(self, n: int, *, batch: bool) -> list[Proposal]:
        """The strategy's next ``n`` proposals, given the ones not told yet as pending;
        a ``batch`` of several records where it was asked."""
        if n <= 0:
            return []
        out, start = [], len(self.trials)
        for proposal in self.strategy.ask(n, pending=list(self._pending.values())):
            if batch and n > 1:
                proposal = Proposal(proposal.config, {**proposal.info, "batch": [start, n]})
            key = self.strategy._key(proposal.config)
            if key in self._measured or key in self._pending:
                _log.warning(
                    "strategy %s re-proposed a measured configuration; skipped", self.strategy.name
                )
                continue
            self._pending[key] = proposal
            out.append(proposal)
        return out

    def _record_running(self, proposals: Sequence[Proposal]) -> None:
        """Record the proposals without a running record as running, in one transaction."""
        new = [(self.strategy._key(p.config), p) for p in proposals]
        new = [(k, p) for k, p in new if k not in self._running]
        if new:
            ids = self.journal.add_running(self.run_id, [(p.config, p.info) for _, p in new])
            self._running.update(zip((k for k, _ in new), ids, strict=True))

    def tell(
        self,
        config: Mapping[str, Any],
        measurement: Measurement | float,
        *,
        started_at: float | None = None,
        duration_s: float = 0.0,
        info: Mapping[str, Any] | None = None,
    ) -> Trial:
        """Store one result, then tell the strategy. A number means an ok measurement
        (NaN or an infinity a ``run_error``); the last one of the budget finishes the run.
        ``info`` is added to the trial's info (e.g. the worker that measured it); a
        configuration recorded as running stops being so in the transaction that stores
        its trial.

        Raises:
            SpaceError: ``config`` is not a configuration of the space (unknown or
                missing parameters, values that are not levels, violated predicates).
            GPAutotuneError: ``config`` is already measured in this run, or
                :meth:`finish` ran and ``config`` was not asked before it (those asked
                before are still stored, as after :meth:`set_aside`).
            BudgetError: the budget is spent.
        """
        try:
            measurement = Measurement.of(measurement)
        except TypeError as exc:
            raise ConfigError(str(exc)) from None
        config = self.space.validate(config)
        key = self.strategy._key(config)
        if self._closed and key not in self._pending:
            raise GPAutotuneError(f"run {self.run_id} is finished; open it again to go on")
        if key in self._measured:
            raise GPAutotuneError(
                f"configuration {dict(config)} is already measured in run {self.run_id}"
            )
        if self.remaining == 0:
            raise BudgetError(f"run {self.run_id} has used its budget of {self.budget} evaluations")
        proposal = self._pending.pop(key, None)
        trial = Trial(
            number=len(self.trials),
            config=config,
            measurement=measurement,
            info={**(dict(proposal.info) if proposal else {"source": "user"}), **(info or {})},
            started_at=time.time() if started_at is None else started_at,
            duration_s=duration_s,
        )
        running = self._running.get(key)
        try:  # durable (and no longer running) before the strategy hears of it
            self.journal.add_trials(
                self.run_id, [trial], completes=() if running is None else [running]
            )
        except StorageError as exc:
            value = measurement.value if measurement.ok else measurement.status.value
            raise type(exc)(f"{exc} (not stored: {dict(config)} -> {value})") from None
        self._running.pop(key, None)
        self.trials.append(trial)
        self._measured.add(key)
        _log_trial(self, trial)
        self.strategy.tell([trial])
        if self.remaining == 0:
            self._finish()
        return trial

    def finish(self) -> None:
        """Mark the run finished in the journal (reports analyse finished runs only) and
        give up its ownership; running records left (beyond a lowered budget) are dropped.
        Nothing more is asked (:meth:`ask` gives an empty list); configurations asked
        before are still told and stored (a batch, evaluations in flight), others refused
        (opening the run again, as a new :class:`TuningRun`, resumes it)."""
        self._finish()
        self._closed, self._queued = True, []

    def _finish(self) -> None:
        """:meth:`finish` without refusing later asks and tells (the budget's last tell,
        an exhausted strategy: asks then return nothing)."""
        if not self._finished:
            self.journal.clear_running(self.run_id)
            self.journal.finish_run(self.run_id)
            self._finished = True
        self.release()

    def release(self) -> None:
        """Give up the ownership of the run (another process may resume it now); a
        journal that can no longer be written keeps it until this process ends."""
        try:
            self.journal.release_run(self.run_id)
        except StorageError as exc:
            _log.warning("run %d: %s", self.run_id, exc)

    def to_frame(self) -> pd.DataFrame:
        return trials_frame(self.journal, self.run_id)


def _warn_unidentified(problem: Problem | None) -> None:
    """Warn when part of a function's identity is left out of the run key: another
    objective differing only there would resume this one's run."""
    if isinstance(problem, FunctionProblem) and problem.unidentified:
        warnings.warn(
            f"the run key of {problem.name!r} cannot tell this objective from another one "
            f"differing only in {problem.unidentified}; give the run a label= (or "
            "FunctionProblem(..., name=)) so that another objective does not resume it",
            stacklevel=3,
        )


def _log_trial(run: TuningRun, trial: Trial) -> None:
    """One INFO line per trial (shown once logging is configured, as in Optuna)."""
    if not _log.isEnabledFor(logging.INFO):
        return
    best = run.best
    shown = f"value {trial.value:.6g}" if trial.ok else f"{trial.status.value}"
    _log.info(
        "run %d trial %d: %s with %s; best %s",
        run.run_id,
        trial.number,
        shown,
        dict(trial.config),
        "none yet" if best is None else f"{best.value:.6g} (trial {best.number})",
    )
