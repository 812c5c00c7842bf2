"""YAML run descriptions, validated with pydantic; every mistake names its key.

A tuning file::

    problem: {name: laplacian-replay}          # + the problem's own options
    strategy: {name: gpr, trend: linear}       # + the strategy's own options
    budget: 120
    seed: 1
    storage: results/laplacian.db              # default: results/<problem>-<strategy>.db
"""

from __future__ import annotations

import inspect
import os
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from gpautotune.exceptions import ConfigError, DataNotFoundError, format_validation_error
from gpautotune.problems import Problem, problem_factory
from gpautotune.storage import import_csv
from gpautotune.strategies import Strategy, strategy_class

M = TypeVar("M", bound=BaseModel)

__all__ = [
    "Section",
    "TuneConfig",
    "load_config",
    "validate_options",
    "build_problem",
    "build_strategy",
]


class Section(BaseModel):
    """``{name: ..., <options>}`` — a named problem or strategy with its options."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TuneConfig(BaseModel):
    """A tuning run: problem, strategy, budget, seed, storage."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    problem: Section
    strategy: Section = Section(name="gpr")
    budget: int = Field(gt=0)
    seed: int | None = None
    storage: str | None = None
    batch_size: int = Field(1, gt=0)
    warm_start: str | None = None
    label: str | None = None

    def storage_path(self) -> str:
        if self.storage:
            return self.storage
        safe = self.problem.name.replace("/", "-")
        return str(Path("results") / f"{safe}-{self.strategy.name}.db")


def validate_options(
    target: Callable[..., Any], options: dict[str, Any], where: str, skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Validate keyword ``options`` against ``target``'s signature and type hints.

    Raises:
        ConfigError: an unknown key (listing the allowed ones) or a value of the wrong type.
    """
    func = target.__init__ if inspect.isclass(target) else target
    sig = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - unresolvable hints: fall back to no type checking
        hints = {}
    fields: dict[str, Any] = {}
    for name, p in sig.parameters.items():
        if name in ("self", *skip) or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        default = ... if p.default is p.empty else p.default
        fields[name] = (hints.get(name, Any), default)
    unknown = sorted(set(options) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown option(s) {unknown}; allowed: {sorted(fields)}")
    model = create_model(
        f"{where}_options",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **fields,
    )
    try:
        validated = model.model_validate(options)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, where)) from None
    return {k: getattr(validated, k) for k in options}


def load_yaml_model(path: str | os.PathLike[str], model: type[M], what: str, keys: str) -> M:
    """Read a YAML file and validate it as ``model``; errors name the file and the key.

    Raises:
        DataNotFoundError: the file does not exist.
        ConfigError: bad YAML, not a mapping, or a bad key or value.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{what} file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with keys {keys}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: {format_validation_error(exc, '')}".replace(": .", ": ")
        ) from None


def load_config(path: str | os.PathLike[str]) -> TuneConfig:
    """Read and validate a tuning YAML file."""
    return load_yaml_model(path, TuneConfig, "config", "problem, strategy, budget, ...")


def build_problem(section: Section) -> Problem:
    """The problem a section names, its options validated."""
    factory, extra = problem_factory(section.name)
    options = validate_options(
        factory, section.options, f"problem ({section.name})", skip=tuple(extra)
    )
    return factory(**extra, **options)


def build_strategy(section: Section, problem: Problem, seed: int | None) -> Strategy:
    """The strategy a section names, its options checked by its settings dataclass."""
    return strategy_class(section.name)(problem.space, seed=seed, **section.options)


def warm_start_trials(config: TuneConfig, problem: Problem) -> list:
    """Trials of the config's warm-start CSV (objective column ``value``), or none."""
    return import_csv(config.warm_start, problem.space) if config.warm_start else []
