"""Optuna's samplers as strategies, driven through Optuna's ask-and-tell interface.

Each adapter owns one in-memory study (minimised) whose ``ask`` is given the space's
distributions (fixed for the whole run):

* integer ranges: ``IntDistribution(low, high, step)`` on their values;
* other ordered levels (powers of two, irregular ordinals): ``IntDistribution(0, L-1)``
  on the level index, an ordinal integer (for consecutive powers of two it is the
  exponent, i.e. the log scale);
* unordered choices and booleans: ``CategoricalDistribution``;
* real intervals: ``FloatDistribution(low, high, log)``.

Optuna has no notion of a constrained search space, so every predicate is left to the
fair-accounting rule: a violating proposal is refused and the sampler asked again (no
budget spent); a measured failure spends budget. How an outcome without a value (a
refusal, a failed measurement) is told is the option ``infeasible``:

* ``"fail"`` (default): ``TrialState.FAIL``. Optuna's samplers ignore failed trials, so
  they learn nothing from one: the GP sampler proposes the same point again (answered
  from the run's trials, or refused again) and a run may end at the cap of answers in a
  row that spend no budget (docs/peers.md measures it);
* ``"constraint"``: Optuna's own route for infeasible trials (``Trial.set_constraint``,
  used by its GP and TPE samplers): the trial is completed with the worst value measured
  so far and a constraint value of 1 (measured values carry 0), so the sampler models
  where no value is to be had (``TrialState.FAIL`` while nothing has been measured).

A duplicate is told as the stored trial was. The sampler is seeded with the run's seed,
which makes every run reproducible.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.trial import TrialState, create_trial

from gpautotune.space import IntRange, Ordinal, Parameter, Real, Space
from gpautotune.strategies._registry import register
from gpautotune.strategies._settings import StrategySettings, strategy_settings
from gpautotune.strategies.peers._fair import PeerAsk, PeerStrategy
from gpautotune.trial import Trial

__all__ = [
    "OptunaSettings",
    "OptunaStrategy",
    "OptunaGP",
    "OptunaTPE",
    "OptunaRandom",
    "optuna_distributions",
]

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _distribution(p: Parameter) -> BaseDistribution:
    if isinstance(p, Real):
        return FloatDistribution(p.low, p.high, log=p.log)
    if isinstance(p, IntRange):
        return IntDistribution(p.low, p.low + (p.n_levels - 1) * p.step, step=p.step)
    if isinstance(p, Ordinal):
        return IntDistribution(0, p.n_levels - 1)
    return CategoricalDistribution(list(p.levels))


def optuna_distributions(space: Space) -> dict[str, BaseDistribution]:
    """Optuna's distribution for each parameter (see the module docstring)."""
    return {p.name: _distribution(p) for p in space.parameters}


def _indexed(p: Parameter) -> bool:
    return isinstance(p, Ordinal) and not isinstance(p, IntRange)


#: The name of the one constraint (``Trial.set_constraint``) in ``"constraint"`` mode.
_CONSTRAINT = "predicates"


@strategy_settings
class OptunaSettings(StrategySettings):
    """Options of the Optuna adapters that model infeasibility (GP and TPE samplers).

    Attributes:
        infeasible: how a refusal or a failed measurement is told: ``"fail"``
            (``TrialState.FAIL``) or ``"constraint"`` (``Trial.set_constraint``); see the
            module docstring.
    """

    infeasible: Literal["fail", "constraint"] = "fail"


class OptunaStrategy(PeerStrategy):
    """An Optuna sampler behind the fair-accounting rules (subclasses name the sampler).

    Args:
        space: the search space.
        seed: the sampler's seed.
        **options: the fields of :attr:`Settings`.
    """

    package: ClassVar[str] = "optuna"
    Settings = OptunaSettings
    options: OptunaSettings

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self._distributions = optuna_distributions(space)
        self._params = {p.name: p for p in space.parameters}
        self._study: optuna.Study | None = None

    @property
    def infeasible(self) -> str:
        """How an outcome without a value is told (the option ``infeasible``)."""
        return self.options.infeasible

    def _sampler(self) -> optuna.samplers.BaseSampler:
        raise NotImplementedError

    def _peer_start(self) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            self._study = optuna.create_study(direction="minimize", sampler=self._sampler())

    def _peer_ask(self) -> PeerAsk:
        assert self._study is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            trial = self._study.ask(self._distributions)
        return PeerAsk(self._decode(trial.params), trial)

    def _peer_tell(self, handle: Any, trial: Trial, *, fresh: bool = True) -> None:
        assert self._study is not None
        if not trial.ok:
            self._tell_no_value(handle)
            return
        if self.infeasible == "constraint":
            handle.set_constraint(_CONSTRAINT, 0.0)
        self._study.tell(handle, trial.value)

    def _peer_refuse(self, handle: Any) -> None:
        self._tell_no_value(handle)

    def _tell_no_value(self, handle: Any) -> None:
        assert self._study is not None
        measured = [t.value for t in self.trials if t.ok]
        if self.infeasible == "fail" or not measured:
            self._study.tell(handle, state=TrialState.FAIL)
            return
        handle.set_constraint(_CONSTRAINT, 1.0)
        self._study.tell(handle, max(measured))

    def _peer_history(self, trials: Sequence[Trial]) -> None:
        assert self._study is not None
        for t in trials:
            self._study.add_trial(
                create_trial(
                    params=self._encode(t.config),
                    distributions=self._distributions,
                    value=t.value if t.ok else None,
                    state=TrialState.COMPLETE if t.ok else TrialState.FAIL,
                    system_attrs=self._feasible() if t.ok else None,
                )
            )

    def _feasible(self) -> dict[str, float] | None:
        """The system attribute ``Trial.set_constraint`` writes, for a feasible trial."""
        return {f"constraints:{_CONSTRAINT}": 0.0} if self.infeasible == "constraint" else None

    def _decode(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            name: p.levels[int(params[name])] if _indexed(p) else params[name]
            for name, p in self._params.items()
        }

    def _encode(self, config: dict[str, Any]) -> dict[str, Any]:
        return {
            name: p.levels.index(config[name]) if _indexed(p) else config[name]
            for name, p in self._params.items()
        }


@register("optuna-gp")
class OptunaGP(OptunaStrategy):
    """Optuna's ``GPSampler`` (Gaussian process, log EI), default settings, seeded."""

    def _sampler(self) -> optuna.samplers.BaseSampler:
        return optuna.samplers.GPSampler(seed=self.seed)


@register("optuna-tpe")
class OptunaTPE(OptunaStrategy):
    """Optuna's ``TPESampler`` (its default sampler), default settings, seeded."""

    def _sampler(self) -> optuna.samplers.BaseSampler:
        return optuna.samplers.TPESampler(seed=self.seed)


@register("optuna-random")
class OptunaRandom(OptunaStrategy):
    """Optuna's ``RandomSampler``, seeded (the sanity check of the accounting)."""

    Settings = StrategySettings  # the random sampler learns nothing: no options

    @property
    def infeasible(self) -> str:
        return "fail"

    def _sampler(self) -> optuna.samplers.BaseSampler:
        return optuna.samplers.RandomSampler(seed=self.seed)
