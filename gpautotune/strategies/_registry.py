"""Strategies by name: built-ins imported lazily, user strategies through :func:`register`.

A name ending in ``*`` is a family: ``kt-*`` maps ``kt-<strategy>`` to a factory that
takes ``<strategy>`` and returns the class. The peers' adapters need the optional
packages of ``gpautotune[peers]``; naming one without them raises a
:class:`~gpautotune.exceptions.MissingExtraError` that says what to install.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from gpautotune.exceptions import ConfigError, MissingExtraError
from gpautotune.space import Space
from gpautotune.strategies._base import Strategy

__all__ = [
    "register",
    "strategy_class",
    "make_strategy",
    "available_strategies",
    "strategy_options",
]

_BUILTIN: dict[str, str] = {
    "random": "gpautotune.strategies.random_sample:RandomSampling",
    "sobol": "gpautotune.strategies.sobol:SobolSampling",
    "gpr": "gpautotune.strategies.gpr:GPRStrategy",
    "gpr-seeds": "gpautotune.strategies.gpr_seeds:GPRSeeds",
    "round-robin": "gpautotune.strategies.round_robin:RoundRobin",
    "lhs": "gpautotune.strategies.lhs:LatinHypercube",
    "greedy": "gpautotune.strategies.greedy:GreedySearch",
    "greedy-restart": "gpautotune.strategies.greedy_restart:GreedyRestart",
    "genetic": "gpautotune.strategies.genetic:GeneticAlgorithm",
    "annealing": "gpautotune.strategies.annealing:SimulatedAnnealing",
    "lm": "gpautotune.strategies.lm:LinearModelSearch",
    "qr": "gpautotune.strategies.qr:QuantileRegressionSearch",
    "dlmt": "gpautotune.strategies.dlmt:DLMT",
    "two-stage": "gpautotune.strategies.two_stage:TwoStage",
    "optuna-gp": "gpautotune.strategies.peers._optuna:OptunaGP",
    "optuna-tpe": "gpautotune.strategies.peers._optuna:OptunaTPE",
    "optuna-random": "gpautotune.strategies.peers._optuna:OptunaRandom",
    "smac-bb": "gpautotune.strategies.peers._smac:SmacBlackBox",
    "smac-hpo": "gpautotune.strategies.peers._smac:SmacHPO",
    "smac-random": "gpautotune.strategies.peers._smac:SmacRandom",
    "kt-*": "gpautotune.strategies.peers._kernel_tuner:kernel_tuner_strategy",
}
_PEERS = "gpautotune.strategies.peers."
_REGISTERED: dict[str, type[Strategy]] = {}


def register(name: str) -> Callable[[type[Strategy]], type[Strategy]]:
    """Class decorator: make a strategy available by ``name`` (YAML, CLI, :func:`make_strategy`)."""

    def deco(cls: type[Strategy]) -> type[Strategy]:
        cls.name = name
        _REGISTERED[name] = cls
        return cls

    return deco


def available_strategies() -> list[str]:
    from gpautotune.strategies.peers import PEER_STRATEGIES

    names = {n for n in _BUILTIN if not n.endswith("*")} | set(PEER_STRATEGIES)
    return sorted(names | set(_REGISTERED))


def strategy_class(name: str) -> type[Strategy]:
    if name in _REGISTERED:
        return _REGISTERED[name]
    target, variant = _BUILTIN.get(name), None
    if target is None and "-" in name:
        family = name.split("-", 1)[0] + "-*"
        target, variant = _BUILTIN.get(family), name.split("-", 1)[1]
    if target is None:
        raise ConfigError(f"unknown strategy {name!r}; available: {available_strategies()}")
    module, attr = target.split(":")
    found = getattr(_import(name, module), attr)
    return found if variant is None else found(variant)


def _import(name: str, module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if not module.startswith(_PEERS):
            raise
        raise MissingExtraError(
            f"strategy {name!r} needs the optional package {exc.name or exc}: "
            "pip install 'gpautotune[peers]'"
        ) from None


def strategy_options(name: str) -> dict[str, inspect.Parameter]:
    """The keyword options a strategy takes (the fields of its settings dataclass)."""
    return strategy_class(name).Settings.parameters()


def make_strategy(name: str, space: Space, *, seed: int | None = None, **options: Any) -> Strategy:
    """Build a strategy by name.

    Raises:
        ConfigError: an unknown option (listing the allowed ones) or a bad value.
    """
    try:
        return strategy_class(name)(space, seed=seed, **options)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"strategy {name!r}: {exc}") from None
