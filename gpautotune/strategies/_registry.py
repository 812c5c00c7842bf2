"""Strategies by name: built-ins imported lazily, user strategies through :func:`register`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from gpautotune.exceptions import ConfigError
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
}
_REGISTERED: dict[str, type[Strategy]] = {}


def register(name: str) -> Callable[[type[Strategy]], type[Strategy]]:
    """Class decorator: make a strategy available by ``name`` (YAML, CLI, :func:`make_strategy`)."""

    def deco(cls: type[Strategy]) -> type[Strategy]:
        cls.name = name
        _REGISTERED[name] = cls
        return cls

    return deco


def available_strategies() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def strategy_class(name: str) -> type[Strategy]:
    if name in _REGISTERED:
        return _REGISTERED[name]
    target = _BUILTIN.get(name)
    if target is None:
        raise ConfigError(f"unknown strategy {name!r}; available: {available_strategies()}")
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


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
