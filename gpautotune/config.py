"""YAML run descriptions, validated with pydantic; every mistake names its key.

A tuning file::

    problem: {name: laplacian-replay}          # + the problem's own options
    strategy: {name: gpr, trend: linear}       # + the strategy's own options
    budget: 120
    seed: 1
    storage: results/laplacian.db              # default: results/<problem>-<strategy>.db

A YAML file never imports or calls code it names unless the user opts in outside the
file (``--allow-imports`` on the command line, ``allow_imports=True`` in Python): see
:func:`import_object`.
"""

from __future__ import annotations

import importlib
import inspect
import os
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from gpautotune.exceptions import ConfigError, DataNotFoundError
from gpautotune.problems import Problem
from gpautotune.problems._registry import problem_factory
from gpautotune.space._spec import format_validation_error
from gpautotune.storage import import_csv
from gpautotune.strategies import Strategy, strategy_class

M = TypeVar("M", bound=BaseModel)

#: The keyword through which factories receive the user's opt-in to imports; never a
#: key a file may set.
OPT_IN = "allow_imports"


def import_object(name: str, *, allowed: bool, key: str = "a key") -> Any:
    """The object ``module:attribute`` names, imported only when the user opted in.

    Args:
        name: ``package.module:attribute`` (the attribute may be dotted).
        allowed: the user's explicit opt-in (``--allow-imports``, ``allow_imports=True``).
        key: where the name was written, for the messages (``problem.answer``).

    Raises:
        ConfigError: no opt-in (the message names the key and how to opt in), a name that
            is not ``module:attribute``, or one that cannot be imported.
    """
    if not allowed:
        raise ConfigError(
            f"{key} names Python code ({name!r}), which is imported only on request: "
            "run with --allow-imports (Python: allow_imports=True)"
        )
    module, sep, attr = str(name).partition(":")
    if not sep or not module or not attr:
        raise ConfigError(f"{key}: {name!r} is not 'package.module:function'")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{key}: cannot import {name!r}: {exc}") from None
    return obj


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """``data`` with ``dotted.key=value`` overrides set (values read as YAML scalars).

    ``problem.sizes.n=4096`` sets ``data["problem"]["sizes"]["n"] = 4096``, creating
    mappings on the way.

    Raises:
        ConfigError: an override without ``=`` or a key through something not a mapping.
    """
    out = dict(data)
    for item in overrides:
        path, sep, text = item.partition("=")
        keys = [k for k in path.strip().split(".") if k]
        if not sep or not keys:
            raise ConfigError(f"override {item!r} is not KEY.PATH=VALUE")
        node = out
        for depth, k in enumerate(keys[:-1]):
            child = node.get(k, {})
            if not isinstance(child, dict):
                raise ConfigError(
                    f"override {item!r}: {'.'.join(keys[: depth + 1])} is not a mapping"
                )
            node[k] = node = dict(child)
        try:
            node[keys[-1]] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {item!r}: the value is not valid YAML: {exc}") from None
    return out


__all__ = [
    "Section",
    "TuneConfig",
    "load_config",
    "validate_options",
    "import_object",
    "apply_overrides",
    "OPT_IN",
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
    if OPT_IN in options:
        raise ConfigError(
            f"{where}: {OPT_IN} cannot be set in a file; opt in on the command line "
            f"(--allow-imports) or in Python ({OPT_IN}=True)"
        )
    skip = (*skip, OPT_IN)
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


def load_yaml_model(
    path: str | os.PathLike[str],
    model: type[M],
    what: str,
    keys: str,
    overrides: Sequence[str] = (),
) -> M:
    """Read a YAML file and validate it as ``model``; errors name the file and the key.

    ``overrides`` (``dotted.key=value``) are applied before validation.

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
    data = apply_overrides(data, overrides)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: {format_validation_error(exc, '')}".replace(": .", ": ")
        ) from None


def load_config(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> TuneConfig:
    """Read and validate a tuning YAML file (with ``dotted.key=value`` overrides)."""
    return load_yaml_model(path, TuneConfig, "config", "problem, strategy, budget, ...", overrides)


def build_problem(section: Section, *, allow_imports: bool = False) -> Problem:
    """The problem a section names, its options validated.

    ``allow_imports`` is the user's opt-in to the Python code the section names (passed
    to factories that take it; a file cannot set it).
    """
    factory, extra = problem_factory(section.name)
    options = validate_options(
        factory, section.options, f"problem ({section.name})", skip=tuple(extra)
    )
    if OPT_IN in inspect.signature(factory).parameters:
        options[OPT_IN] = allow_imports
    return factory(**extra, **options)


def build_strategy(section: Section, problem: Problem, seed: int | None) -> Strategy:
    """The strategy a section names, its options validated."""
    cls = strategy_class(section.name)
    options = validate_options(
        cls, section.options, f"strategy ({section.name})", skip=("space", "seed")
    )
    return cls(problem.space, seed=seed, **options)


def warm_start_trials(config: TuneConfig, problem: Problem) -> list:
    """Trials of the config's warm-start CSV (objective column ``value``), or none."""
    return import_csv(config.warm_start, problem.space) if config.warm_start else []
