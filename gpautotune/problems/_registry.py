"""Problems by name, for YAML files and the CLI (built-ins imported lazily).

A name maps to a factory ``f(**options) -> Problem``; a name ending in ``/*`` matches a
family (``spapt/<kernel>``) whose factory takes the part after the slash as ``variant``.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.problems._base import Problem

__all__ = ["register_problem", "make_problem", "available_problems", "problem_factory"]

_BUILTIN: dict[str, str] = {
    "laplacian-replay": "gpautotune.problems.replay:laplacian_replay",
    "laplacian": "gpautotune.problems.laplacian:LaplacianProblem",
    "replay": "gpautotune.problems.table:replay_from_spec",
    "kt-cache": "gpautotune.problems.kt_cache:kt_cache_problem",
    "paced": "gpautotune.problems.paced:paced_problem",
    "booth": "gpautotune.problems.synthetic:BoothProblem",
    "screening": "gpautotune.problems.synthetic:ScreeningProblem",
    "constrained-bits": "gpautotune.problems.synthetic:ConstrainedBitsProblem",
    "hidden-failure": "gpautotune.problems.synthetic:HiddenFailureProblem",
    "quantization-digits": "gpautotune.problems.quantization:digits_problem",
    "spapt/*": "gpautotune.problems.spapt:SpaptProblem",
    "opencl-kernel": "gpautotune.problems.kernel:opencl_kernel",
    "c-kernel": "gpautotune.problems.kernel:c_kernel",
}
_REGISTERED: dict[str, Callable[..., Problem]] = {}


def register_problem(name: str) -> Callable[[Callable[..., Problem]], Callable[..., Problem]]:
    """Decorator: make a problem factory available by ``name``."""

    def deco(factory: Callable[..., Problem]) -> Callable[..., Problem]:
        _REGISTERED[name] = factory
        return factory

    return deco


def available_problems() -> list[str]:
    return sorted(set(_BUILTIN) | set(_REGISTERED))


def problem_factory(name: str) -> tuple[Callable[..., Problem], dict[str, Any]]:
    """The factory for ``name`` and fixed keyword arguments (``variant`` for families)."""
    table = {**{k: v for k, v in _BUILTIN.items()}, **_REGISTERED}
    if name in table:
        target, extra = table[name], {}
    else:
        family = name.split("/", 1)[0] + "/*"
        if "/" not in name or family not in table:
            raise ConfigError(f"unknown problem {name!r}; available: {available_problems()}")
        target, extra = table[family], {"variant": name.split("/", 1)[1]}
    if isinstance(target, str):
        module, attr = target.split(":")
        target = getattr(importlib.import_module(module), attr)
    return target, extra


def make_problem(name: str, **options: Any) -> Problem:
    """Build a problem by name; unknown options raise a :class:`ConfigError` naming the
    allowed ones."""
    factory, extra = problem_factory(name)
    params = inspect.signature(factory).parameters
    allowed = sorted(k for k in params if k not in ("self", "variant"))
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ConfigError(f"problem {name!r} has no option(s) {unknown}; allowed: {allowed}")
    try:
        return factory(**extra, **options)
    except TypeError as exc:
        raise ConfigError(f"problem {name!r}: {exc}") from None
