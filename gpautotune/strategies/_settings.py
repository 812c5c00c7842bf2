"""Strategy settings: one frozen, self-checking dataclass per strategy.

A strategy's options are declared once, as the typed fields (with defaults and
constraints) of a frozen dataclass checked by pydantic, as BoTorch bundles the inputs of
``optimize_acqf`` in a validated dataclass. The same class checks keyword arguments from
Python and options from YAML files, with the same one-line message per bad option
(``kappa: Input should be greater than or equal to 0 (got -1.0)``); it gives the
registry the options' names and defaults; and its values are the strategy's part of the
run key (:meth:`Strategy.settings`).

A new strategy with two options::

    @strategy_settings
    class WalkSettings(StrategySettings):
        steps: PositiveInt = 10
        rate: Annotated[float, Field(gt=0, le=1)] = 0.5


    @register("walk")
    class Walk(Strategy):
        Settings = WalkSettings
        options: WalkSettings  # self.options.steps, self.options.rate

Checks that involve several options go in a ``@model_validator(mode="after")`` method
raising ``ValueError``; checks that need the space (formulas, parameter names) stay in
the strategy's ``__init__``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar, Self, TypeVar

import pydantic
from pydantic import ConfigDict, ValidationError

from gpautotune.exceptions import ConfigError, format_validation_error, unknown_options

__all__ = ["StrategySettings", "strategy_settings"]

T = TypeVar("T")
#: ``allow_inf_nan=False``: no option takes an infinite value (NaN or inf), as none has a
#: meaning for it (``kappa=inf`` stops GPR early, ``design_factor=inf`` overflows).
_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False)


def strategy_settings(cls: type[T]) -> type[T]:
    """Class decorator: make ``cls`` a frozen dataclass whose fields pydantic checks (and
    converts: ``1`` to ``1.0`` for a float, a list to a tuple) at construction."""
    return pydantic.dataclasses.dataclass(frozen=True, config=_CONFIG)(cls)


@strategy_settings
class StrategySettings:
    """The settings of a strategy without options; the base of every strategy's settings."""

    #: Options added after runs were stored: left out of the run key while at their
    #: defaults, so that the stored runs keep their keys (and resume).
    KEY_OMITS_DEFAULTS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def build(cls, options: Mapping[str, Any], where: str) -> Self:
        """The settings of keyword ``options``.

        Args:
            options: option name -> value (from Python keywords or a YAML mapping).
            where: what the message names first (``strategy 'gpr'``, a YAML key path).

        Raises:
            ConfigError: an unknown option (listing the allowed ones) or a bad value, one
                line: ``where: option: rule (got value)``.
        """
        names = cls.names()
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise unknown_options(where, unknown, names)
        try:
            settings = cls(**options)
        except ValidationError as exc:
            raise ConfigError(f"{where}: {format_validation_error(exc, '')}") from None
        for name, value in options.items():  # pydantic reads true/false as 1/0 for numbers
            if isinstance(value, bool) and not isinstance(getattr(settings, name), bool):
                raise ConfigError(f"{where}: {name}: a number, not true/false (got {value!r})")
        return settings

    @classmethod
    def names(cls) -> list[str]:
        """The options' names, in declaration order."""
        return [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]

    @classmethod
    def parameters(cls) -> dict[str, inspect.Parameter]:
        """The options as keyword-only parameters (name, default, annotation)."""
        return {
            f.name: inspect.Parameter(
                f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=f.type
            )
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        }

    def as_dict(self) -> dict[str, Any]:
        """Option name -> value (tuples stay tuples; JSON stores them as lists)."""
        fields = dataclasses.fields(self)  # type: ignore[arg-type]
        return {f.name: getattr(self, f.name) for f in fields}

    def key(self) -> dict[str, Any]:
        """The options that identify a run: :meth:`as_dict` without the
        :attr:`KEY_OMITS_DEFAULTS` options that are at their defaults."""
        defaults = {f.name: f.default for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return {
            k: v
            for k, v in self.as_dict().items()
            if k not in self.KEY_OMITS_DEFAULTS or v != defaults[k]
        }
