"""The tuning loop and the ask/tell API.

:class:`TuningRun` owns storage: every trial is committed to the journal before the
strategy is told about it. Runs are identified by (problem, its settings, strategy, its
settings, seed, label); opening the same run again resumes it: stored trials are told to
a fresh strategy, nothing stored is measured again, and the budget counts every stored
evaluation, failures included (warm-start trials are data, not budget).

A resumed run continues as the uninterrupted one would have: strategies propose from the
trials told alone, and a batch (``ask(n)``, ``n > 1``) records where it was asked
(``batch: [trials before it, n]`` in its trials' info), so a run killed in the middle of
a batch asks that batch again from the same trials and measures what is left of it
before asking anew.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from gpautotune.exceptions import BudgetError, ConfigError, GPAutotuneError, StorageError
from gpautotune.execution import Evaluator
from gpautotune.measurement import Measurement
from gpautotune.problems import Problem
from gpautotune.space import Config, Space
from gpautotune.storage import Journal, RunSpec, trials_frame
from gpautotune.strategies import Proposal, Strategy, make_strategy
from gpautotune.trial import Origin, Trial

__all__ = ["TuningRun", "TuneResult", "run_spec", "tune"]

_log = logging.getLogger(__name__)
StorageLike = Journal | str | os.PathLike[str] | None


def _journal(storage: StorageLike) -> Journal:
    if isinstance(storage, Journal):
        return storage
    return Journal(":memory:" if storage is None else storage)


def run_spec(
    target: Problem | Space, strategy: Strategy, *, seed: int | None, label: str | None
) -> RunSpec:
    """The journal identity of a run: problem (or space) and its settings, strategy and
    its settings, seed and label. Runs with the same key are one run (opening it again
    resumes it); a comparison builds it once per problem and strategy and varies the seed
    (``dataclasses.replace(spec, seed=...)``)."""
    problem = target if isinstance(target, Problem) else None
    space = target.space if isinstance(target, Problem) else target
    return RunSpec(
        problem=problem.name if problem else (space.name or "custom"),
        problem_settings=problem.describe() if problem else {},
        strategy=strategy.name,
        strategy_settings=strategy.settings(),
        seed=strategy.seed if seed is None else seed,
        space=space.describe(),
        label=label,
        data_digest=problem.data_digest() if problem else None,
    )


def best_trial(trials: Sequence[Trial]) -> Trial | None:
    """The ok trial of lowest value (earliest on ties)."""
    ok = [t for t in trials if t.ok]
    return min(ok, key=lambda t: (t.value, t.number)) if ok else None


@dataclass(frozen=True)
class TuneResult:
    """What :func:`tune` returns."""

    run_id: int
    trials: list[Trial]
    budget: int
    storage: str

    @property
    def best(self) -> Trial | None:
        return best_trial(self.trials)

    @property
    def best_config(self) -> Config | None:
        return None if self.best is None else dict(self.best.config)

    @property
    def best_value(self) -> float | None:
        return None if self.best is None else self.best.value

    @property
    def used(self) -> int:
        return sum(t.counts_in_budget for t in self.trials)


class TuningRun:
    """A resumable run with an ask/tell API, for code that runs its own evaluations.

    Example::

        run = TuningRun(space, "sobol", storage="runs.db", seed=1, budget=20)
        while run.remaining:
            for config in run.ask():
                run.tell(config, my_measure(config))

    Args:
        target: the :class:`Problem` (or only a :class:`Space` when you evaluate yourself).
        strategy: a strategy instance or a registered name.
        storage: a :class:`Journal`, a database path, or None (in memory).
        seed: the run's seed (also the strategy's when built by name).
        budget: evaluations allowed, failures included; None for no limit.
        strategy_options: keyword options of a strategy given by name.
        warm_start: earlier trials told to the strategy first (not counted in the budget).
        label: distinguishes otherwise identical runs (e.g. repetitions).
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
        warm_start: Sequence[Trial] | None = None,
        label: str | None = None,
    ) -> None:
        if budget is not None and (not isinstance(budget, int) or budget < 1):
            raise BudgetError(f"budget must be a positive integer, got {budget!r}")
        self.problem = target if isinstance(target, Problem) else None
        self.space = target.space if isinstance(target, Problem) else target
        if isinstance(strategy, str):
            strategy = make_strategy(
                strategy, self.space, seed=seed, **dict(strategy_options or {})
            )
        elif strategy_options:
            raise ConfigError("strategy_options only apply to a strategy given by name")
        self.strategy = strategy
        self.budget = budget
        self.journal = _journal(storage)
        self.record = self.journal.open_run(
            run_spec(target, strategy, seed=seed, label=label), budget
        )
        self.run_id = self.record.id
        self.journal.claim_run(self.run_id)  # before anything is measured for it
        self.trials: list[Trial] = self.journal.trials(self.run_id)
        if not self.trials and warm_start:
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
        self._measured = {self.strategy._key(t.config) for t in self.trials}
        self._pending: dict[Any, Proposal] = {}
        #: Proposals of a batch interrupted by a kill, measured before anything new.
        self._queued: list[Proposal] = []
        if self.trials:
            _log.info("run %d: resuming with %d stored trials", self.run_id, len(self.trials))
            self._resume(self.trials)

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

    @property
    def used(self) -> int:
        """Evaluations counted in the budget so far."""
        return sum(t.counts_in_budget for t in self.trials)

    @property
    def remaining(self) -> int | None:
        return None if self.budget is None else max(self.budget - self.used, 0)

    @property
    def best(self) -> Trial | None:
        return best_trial(self.trials)

    def ask(self, n: int = 1) -> list[Config]:
        """Up to ``n`` configurations to evaluate (never more than the budget left)."""
        if self.remaining is not None:  # pending proposals not yet handed out do not count
            n = min(n, self.remaining - len(self._pending) + len(self._queued))
        if n <= 0:
            return []
        if self._queued:  # an interrupted batch first, alone
            out, self._queued = self._queued[:n], self._queued[n:]
            return [dict(p.config) for p in out]
        out = []
        start = len(self.trials)
        for proposal in self.strategy.ask(n):
            if n > 1:
                proposal = Proposal(proposal.config, {**proposal.info, "batch": [start, n]})
            key = self.strategy._key(proposal.config)
            if key in self._measured or key in self._pending:
                _log.warning(
                    "strategy %s re-proposed a measured configuration; skipped", self.strategy.name
                )
                continue
            self._pending[key] = proposal
            out.append(dict(proposal.config))
        return out

    def tell(
        self,
        config: Mapping[str, Any],
        measurement: Measurement | float,
        *,
        started_at: float | None = None,
        duration_s: float = 0.0,
    ) -> Trial:
        """Store one result, then tell the strategy. A number means an ok measurement.

        Raises:
            SpaceError: ``config`` is not a configuration of the space (unknown or
                missing parameters, values that are not levels, violated predicates).
            GPAutotuneError: ``config`` is already measured in this run.
            BudgetError: the budget is spent.
        """
        if not isinstance(measurement, Measurement):
            measurement = Measurement.success(float(measurement))
        config = self.space.validate(config)
        key = self.strategy._key(config)
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
            info=dict(proposal.info) if proposal else {"source": "user"},
            started_at=time.time() if started_at is None else started_at,
            duration_s=duration_s,
        )
        try:
            self.journal.add_trial(self.run_id, trial)  # durable before the strategy hears of it
        except StorageError as exc:
            value = measurement.value if measurement.ok else measurement.status.value
            raise type(exc)(f"{exc} (not stored: {dict(config)} -> {value})") from None
        self.trials.append(trial)
        self._measured.add(key)
        self.strategy.tell([trial])
        return trial

    def finish(self) -> None:
        """Mark the run finished and give up its ownership."""
        self.journal.finish_run(self.run_id)
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


def tune(
    problem: Problem,
    strategy: Strategy | str,
    budget: int,
    *,
    storage: StorageLike = None,
    seed: int | None = None,
    strategy_options: Mapping[str, Any] | None = None,
    warm_start: Sequence[Trial] | None = None,
    batch_size: int = 1,
    evaluator: Evaluator | None = None,
    callback: Callable[[Trial, TuningRun], None] | None = None,
    label: str | None = None,
) -> TuneResult:
    """Minimise ``problem`` with ``strategy`` for ``budget`` evaluations.

    Re-running with the same problem, strategy, seed and storage resumes the stored run.
    ``callback(trial, run)`` is called after each stored trial (progress bars, logging).
    """
    if batch_size < 1:
        raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
    problem.check()  # a set-up that cannot measure anything fails here, not trial by trial
    run = TuningRun(
        problem,
        strategy,
        storage=storage,
        seed=seed,
        budget=budget,
        strategy_options=strategy_options,
        warm_start=warm_start,
        label=label,
    )
    evaluator = evaluator or problem.default_evaluator()
    try:
        while run.remaining:
            configs = run.ask(min(batch_size, run.remaining))
            if not configs:
                _log.info("strategy %s has nothing more to propose", run.strategy.name)
                break
            for config in configs:
                ev = evaluator(problem, config)
                trial = run.tell(
                    config, ev.measurement, started_at=ev.started_at, duration_s=ev.duration_s
                )
                if callback is not None:
                    callback(trial, run)
        run.finish()
    finally:
        evaluator.close()
        run.release()
    return TuneResult(run.run_id, list(run.trials), budget, run.journal.path)
