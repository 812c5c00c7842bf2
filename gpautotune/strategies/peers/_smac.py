"""SMAC3's facades as strategies, driven through SMAC's ask-and-tell interface.

The space becomes a ConfigSpace ``ConfigurationSpace`` (seeded with the run's seed):

* integer ranges of step 1: ``UniformIntegerHyperparameter``;
* other ordered levels (powers of two, stepped or irregular ordinals):
  ``OrdinalHyperparameter`` with the levels in order;
* unordered choices and booleans: ``CategoricalHyperparameter``;
* real intervals: ``UniformFloatHyperparameter`` (log where the parameter is);
* a single level: ``Constant``;
* predicates: forbidden clauses. Each predicate is tabulated over the parameters it
  reads (:mod:`._predicates`) and each forbidden combination becomes a
  ``ForbiddenAndConjunction`` of ``ForbiddenEqualsClause`` (a ``ForbiddenInClause`` for
  a one-parameter predicate). A predicate that cannot be tabulated, or that would need
  more than :data:`MAX_FORBIDDEN` clauses, is left to the fair-accounting rule.

The scenario is deterministic (one evaluation per configuration) with ``n_trials`` set to
the run's budget (:meth:`plan`; SMAC's own default, 100, without one) and the run's seed.
A failed measurement and a refused proposal are told ``StatusType.CRASHED`` with the
scenario's crash cost, as SMAC's own runner reports a crashed target function; a
duplicate is told the stored cost. SMAC writes its run files into a temporary folder
that is removed when the run ends. Facades: ``smac-bb`` is the black-box facade
(Gaussian process), ``smac-hpo`` the hyperparameter-optimisation facade (random forest,
scikit-learn's in SMAC 2.4: ``pyrfr`` is not needed), ``smac-random`` the random facade.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from ConfigSpace import (
    CategoricalHyperparameter,
    ConfigurationSpace,
    Constant,
    ForbiddenAndConjunction,
    ForbiddenEqualsClause,
    ForbiddenInClause,
    OrdinalHyperparameter,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)
from smac import BlackBoxFacade, HyperparameterOptimizationFacade, RandomFacade, Scenario
from smac.runhistory.dataclasses import TrialInfo, TrialValue
from smac.runhistory.enumerations import StatusType

from gpautotune.space import Boolean, Categorical, IntRange, Parameter, Real, Space
from gpautotune.strategies._registry import register
from gpautotune.strategies.peers._fair import PeerAsk, PeerStrategy
from gpautotune.strategies.peers._predicates import PredicateTable, predicate_tables
from gpautotune.trial import Trial

__all__ = ["SmacStrategy", "SmacBlackBox", "SmacHPO", "SmacRandom", "smac_configspace"]

#: Forbidden clauses per parameter, at most: ConfigSpace oversamples by the square of
#: (clauses / parameters) when it samples, so many clauses make sampling explode.
MAX_CLAUSES_PER_PARAMETER = 3
logging.getLogger("smac").setLevel(logging.WARNING)


def _hyperparameter(p: Parameter) -> Any:
    if isinstance(p, Real):
        return UniformFloatHyperparameter(p.name, p.low, p.high, log=p.log)
    if p.n_levels == 1:
        return Constant(p.name, p.levels[0])
    if isinstance(p, IntRange) and p.step == 1:
        return UniformIntegerHyperparameter(p.name, p.low, p.high)
    if isinstance(p, (Categorical, Boolean)):
        return CategoricalHyperparameter(p.name, list(p.levels))
    return OrdinalHyperparameter(p.name, list(p.levels))


def _grouped(table: PredicateTable) -> list[tuple[dict[str, Any], str, list[Any]]]:
    """The forbidden rows as few ``(fixed values, name, forbidden values)`` groups: rows
    grouped by all parameters but one, the one that gives the fewest groups."""
    best: list[tuple[dict[str, Any], str, list[Any]]] | None = None
    for k, last in enumerate(table.names):
        groups: dict[tuple, list[Any]] = {}
        for row in table.forbidden:
            groups.setdefault(row[:k] + row[k + 1 :], []).append(row[k])
        rest = table.names[:k] + table.names[k + 1 :]
        found = [(dict(zip(rest, key, strict=True)), last, v) for key, v in groups.items()]
        if best is None or len(found) < len(best):
            best = found
    return best or []


def _clause(hps: dict[str, Any], fixed: dict[str, Any], name: str, values: list[Any]) -> Any:
    last = (
        ForbiddenEqualsClause(hps[name], values[0])
        if len(values) == 1
        else ForbiddenInClause(hps[name], values)
    )
    if not fixed:
        return last
    return ForbiddenAndConjunction(
        *(ForbiddenEqualsClause(hps[n], v) for n, v in fixed.items()), last
    )


def smac_configspace(space: Space, seed: int | None = None) -> tuple[ConfigurationSpace, list[str]]:
    """The ConfigSpace of ``space`` and the predicates left untranslated (see the module
    docstring)."""
    cs = ConfigurationSpace(seed=seed)
    hps = {p.name: _hyperparameter(p) for p in space.parameters}
    cs.add(list(hps.values()))
    tables, left = predicate_tables(space)
    budget, seen, clauses = MAX_CLAUSES_PER_PARAMETER * space.dims, set(), []
    for table in sorted(tables, key=lambda t: len(_grouped(t))):
        key = (table.names, frozenset(table.forbidden))
        if key in seen:  # the same forbidden set as a translated predicate
            continue
        groups = _grouped(table)
        if len(clauses) + len(groups) > budget:
            left.append(table.text)
            continue
        seen.add(key)
        clauses += [_clause(hps, *g) for g in groups]
    cs.add(clauses)
    return cs, left


def _finite(build: Callable[..., tuple[np.ndarray, np.ndarray]]) -> Callable[..., Any]:
    """An encoder's ``_build_matrix`` that first replaces non-finite costs (crashes at
    the default crash cost, inf) by the largest finite one (by 1 while there is none).
    SMAC 2.4.1 passes inf to its scaling and the model fit fails on NaN; SMAC's fix
    (automl/SMAC3#1312, after 2.4.1) imputes the same way."""

    def build_finite(
        trials: Mapping[Any, TrialValue], store_statistics: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        costs = [float(v.cost) for v in trials.values()]
        finite = [c for c in costs if np.isfinite(c)]
        if len(finite) < len(costs):
            worst = max(finite) if finite else 1.0  # nothing measured yet: a flat function
            trials = {
                k: v if np.isfinite(float(v.cost)) else replace(v, cost=worst)
                for k, v in trials.items()
            }
        return build(trials, store_statistics)

    return build_finite


def _never(config: Any, seed: int = 0) -> float:
    """The facades' target function: never called (the tuner evaluates, then tells)."""
    raise RuntimeError("gpautotune evaluates SMAC's proposals itself (ask and tell)")


class SmacStrategy(PeerStrategy):
    """A SMAC3 facade behind the fair-accounting rules (subclasses name the facade); the
    facades run with their defaults, so there are no options."""

    package: ClassVar[str] = "smac"
    facade: ClassVar[type] = BlackBoxFacade

    def __init__(self, space: Space, *, seed: int | None = None, **options: Any) -> None:
        super().__init__(space, seed=seed, **options)
        self.configspace, self.untranslated = smac_configspace(space, seed)
        self._folder = Path(tempfile.mkdtemp(prefix="gpautotune-smac-"))
        weakref.finalize(self, shutil.rmtree, self._folder, ignore_errors=True)
        self._smac: Any = None
        self._names = space.names

    def _peer_start(self) -> None:
        scenario = Scenario(
            self.configspace,
            deterministic=True,
            n_trials=self.budget or 100,
            seed=0 if self.seed is None else self.seed,
            output_directory=self._folder,
        )
        encoder = self.facade.get_runhistory_encoder(scenario)
        encoder._build_matrix = _finite(encoder._build_matrix)  # type: ignore[method-assign]
        self._smac = self.facade(
            scenario,
            _never,
            runhistory_encoder=encoder,
            logging_level=False,
            overwrite=True,
        )
        self._crash_cost = scenario.crash_cost

    def _peer_ask(self) -> PeerAsk | None:
        from smac.main.exceptions import ConfigurationSpaceExhaustedException

        try:
            info = self._smac.ask()
        except ConfigurationSpaceExhaustedException:  # every configuration it can draw told
            return None
        values = dict(info.config)
        return PeerAsk({n: values.get(n) for n in self._names}, info)

    def _peer_tell(self, handle: Any, trial: Trial, *, fresh: bool = True) -> None:
        if trial.ok:
            value = TrialValue(cost=trial.value)
        else:
            value = TrialValue(cost=self._crash_cost, status=StatusType.CRASHED)
        self._smac.tell(handle, value, save=False)

    def _peer_refuse(self, handle: Any) -> None:
        self._smac.tell(handle, TrialValue(cost=self._crash_cost, status=StatusType.CRASHED))

    def _peer_history(self, trials: Sequence[Trial]) -> None:
        from ConfigSpace import Configuration

        for t in trials:
            config = Configuration(self.configspace, values=dict(t.config))
            info = TrialInfo(config, seed=self._smac.scenario.seed)
            self._peer_tell(info, t)

    def close(self) -> None:
        shutil.rmtree(self._folder, ignore_errors=True)


@register("smac-bb")
class SmacBlackBox(SmacStrategy):
    """SMAC3's ``BlackBoxFacade`` (Gaussian process, EI, Sobol initial design)."""

    facade = BlackBoxFacade


@register("smac-hpo")
class SmacHPO(SmacStrategy):
    """SMAC3's ``HyperparameterOptimizationFacade`` (random forest, log EI)."""

    facade = HyperparameterOptimizationFacade


@register("smac-random")
class SmacRandom(SmacStrategy):
    """SMAC3's ``RandomFacade`` (random configurations; the accounting's sanity check)."""

    facade = RandomFacade
