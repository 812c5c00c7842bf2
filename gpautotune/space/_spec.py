"""Search spaces described as data (YAML / JSON), validated with pydantic."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from gpautotune.exceptions import ConfigError, format_validation_error
from gpautotune.space._parameters import (
    Boolean,
    Categorical,
    IntRange,
    Ordinal,
    Parameter,
    PowerOfTwo,
    Real,
)
from gpautotune.space._space import Space

__all__ = ["space_from_spec"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class OrdinalSpec(_Spec):
    kind: Literal["ordinal"]
    levels: list[float | int] = Field(min_length=1)
    scale: Literal["index", "linear", "log2"] = "index"

    def build(self) -> Parameter:
        return Ordinal(self.name, tuple(self.levels), scale=self.scale)


class PowerOfTwoSpec(_Spec):
    kind: Literal["pow2"]
    low: int
    high: int

    def build(self) -> Parameter:
        return PowerOfTwo(self.name, self.low, self.high)


class IntSpec(_Spec):
    kind: Literal["int"]
    low: int
    high: int
    step: int = 1

    def build(self) -> Parameter:
        return IntRange(self.name, self.low, self.high, self.step)


class CategoricalSpec(_Spec):
    kind: Literal["categorical"]
    choices: list[str | int | float] = Field(min_length=1)

    def build(self) -> Parameter:
        return Categorical(self.name, tuple(self.choices))


class BoolSpec(_Spec):
    kind: Literal["bool"]

    def build(self) -> Parameter:
        return Boolean(self.name)


class RealSpec(_Spec):
    kind: Literal["real"]
    low: float
    high: float
    log: bool = False

    def build(self) -> Parameter:
        return Real(self.name, self.low, self.high, self.log)


ParameterSpec = Annotated[
    OrdinalSpec | PowerOfTwoSpec | IntSpec | CategoricalSpec | BoolSpec | RealSpec,
    Field(discriminator="kind"),
]
_PARAMS = TypeAdapter(list[ParameterSpec])


def space_from_spec(
    parameters: Sequence[Mapping[str, Any]],
    constraints: Sequence[str] = (),
    derived: Mapping[str, str] | None = None,
    name: str | None = None,
) -> Space:
    """Build a :class:`Space` from plain data.

    Each parameter is a mapping with ``name`` and ``kind`` (``ordinal`` with ``levels``
    and ``scale``; ``pow2`` with ``low``/``high``; ``int`` with ``low``/``high``/``step``;
    ``categorical`` with ``choices``; ``bool``; ``real`` with ``low``/``high``/``log``).
    """
    try:
        specs = _PARAMS.validate_python(list(parameters))
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, "parameters")) from None
    return Space(
        [s.build() for s in specs],
        constraints=list(constraints),
        derived=dict(derived or {}),
        name=name,
    )
