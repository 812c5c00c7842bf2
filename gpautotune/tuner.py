"""The tuning loop and the ask/tell API.

:class:`TuningRun` owns storage: every trial is committed to the journal before the
strategy is told about it. Runs are identified by (problem, its settings, strategy, its
settings, seed, label); opening the same run again resumes it: stored trials are told to
a fresh strategy, nothing stored is measured again, and the budget counts every stored
evaluation, failures included (warm-start trials are data, not budget).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from gpautotune.exceptions import BudgetError, ConfigError, GPAutotuneError
from gpautotune.execution import Evaluator
from gpautotune.problems._base import Measurement, Problem
from gpautotune.space import Config, Space
from gpautotune.storage import Journal, RunSpec, trials_frame
from gpautotune.strategies import Proposal, Strategy, make_strategy
from gpautotune.trial import Origin, Trial

__all__ = ["TuningRun", "TuneResult", "tune"]

_log = logging.getLogger(__name__)
StorageLike = Journal | str | os.PathLike[str] | None


def _journal(storage: StorageLike) -> Journal:
    if isinstance(storage, Journal):
        return storage
    return Journal(":memory:" if storage is None else storage)


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
        strategy.plan(budget)
        self.journal = _journal(storage)
        spec = RunSpec(
            problem=self.problem.name if self.problem else (self.space.name or "custom"),
            problem_settings=self.problem.describe() if self.problem else {},
            strategy=strategy.name,
            strategy_settings=strategy.settings(),
            seed=strategy.seed if seed is None else seed,
            space=self.space.describe(),
            label=label,
        )
        self.record = self.journal.open_run(spec, budget)
        self.run_id = self.record.id
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
        if self.trials:
            _log.info("run %d: resuming with %d stored trials", self.run_id, len(self.trials))
            self.strategy.tell(self.trials)

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
        if self.remaining is not None:
            n = min(n, self.remaining - len(self._pending))
        if n <= 0:
            return []
        out = []
        for proposal in self.strategy.ask(n):
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
        """Store one result, then tell the strategy. A number means an ok measurement."""
        if not isinstance(measurement, Measurement):
            measurement = Measurement.success(float(measurement))
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
            config=self.space.to_configs(self.space.to_index([config]))[0],
            measurement=measurement,
            info=dict(proposal.info) if proposal else {"source": "user"},
            started_at=time.time() if started_at is None else started_at,
            duration_s=duration_s,
        )
        self.journal.add_trial(self.run_id, trial)  # durable before the strategy hears of it
        self.trials.append(trial)
        self._measured.add(key)
        self.strategy.tell([trial])
        return trial

    def finish(self) -> None:
        self.journal.finish_run(self.run_id)

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
        run.strategy.close()
        evaluator.close()
    return TuneResult(run.run_id, list(run.trials), budget, run.journal.path)
