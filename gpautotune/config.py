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

import inspect
import os
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_validator,
)

from gpautotune.exceptions import (
    ConfigError,
    DataNotFoundError,
    format_validation_error,
    unknown_options,
)
from gpautotune.problems import OPT_IN, Problem, import_object, problem_factory
from gpautotune.problems.input_files import find_input, resolve_input_files
from gpautotune.space import Space
from gpautotune.strategies import Strategy, strategy_class
from gpautotune.trial import Trial
from gpautotune.tuner import import_trials

M = TypeVar("M", bound=BaseModel)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """``data`` with ``dotted.key=value`` overrides set (values read as YAML scalars).

    ``problem.sizes.n=4096`` sets ``data["problem"]["sizes"]["n"] = 4096``, creating
    mappings on the way.

    Raises:
        ConfigError: an override without ``=`` or a key through something not a mapping.
    """
    out = dict(data)
    for item in overrides:
        keys, sep, text = _override_keys(item)
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


def _override_keys(item: str) -> tuple[list[str], str, str]:
    """``dotted.key=value`` as its keys, the ``=`` (empty when missing) and the value."""
    path, sep, text = item.partition("=")
    return [k for k in path.strip().split(".") if k], sep, text


def _not_bool(value: Any) -> Any:
    """Refuse ``true``/``false`` where a number is meant (pydantic reads them as 1/0)."""
    if isinstance(value, bool):
        raise ValueError("must be an integer; true/false is not one")
    return value


#: An integer of a file (seed, budget, repetitions, ...): ``seed: true`` is refused.
Integer = Annotated[int, BeforeValidator(_not_bool)]


__all__ = [
    "Integer",
    "Section",
    "TuneConfig",
    "load_config",
    "validate_options",
    "import_object",
    "apply_overrides",
    "OPT_IN",
    "build_problem",
    "build_strategy",
    "check_problem",
    "check_strategy",
    "section_inputs",
]


class Section(BaseModel):
    """``{name: ..., <options>}`` — a named problem or strategy with its options."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


#: The strategy of a tuning file without one, or whose ``strategy:`` section names none.
DEFAULT_STRATEGY = "gpr"


class TuneConfig(BaseModel):
    """A tuning run: problem, strategy (default gpr), budget, seed, storage."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    problem: Section
    strategy: Section = Section(name=DEFAULT_STRATEGY)
    budget: Integer = Field(gt=0)
    seed: Integer | None = Field(None, ge=0)
    storage: str | None = None
    batch_size: Integer = Field(1, gt=0)
    warm_start: str | None = None
    label: str | None = None

    @field_validator("strategy", mode="before")
    @classmethod
    def _default_strategy(cls, value: Any) -> Any:
        """A ``strategy:`` section without ``name`` (``{n_init: 20}``, or ``--set
        strategy.n_init=20`` on a file without one) gives options of the default, gpr."""
        if isinstance(value, Mapping) and "name" not in value:
            return {"name": DEFAULT_STRATEGY, **value}
        return value

    @field_validator("storage")
    @classmethod
    def _storage_given(cls, value: str | None) -> str | None:
        """An empty storage is a mistake, not the default (leaving the key out is)."""
        if value is not None and not value.strip():
            raise ValueError(
                "is empty: give a journal path or sqlite:///PATH, or leave storage out "
                "for results/<problem>-<strategy>.db"
            )
        return value

    def storage_path(self) -> str:
        if self.storage is not None:
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
        raise unknown_options(where, unknown, fields)
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
    replace: Mapping[str, Any] | None = None,
    inputs: Callable[[dict[str, Any], Path], dict[str, Any]] | None = None,
) -> M:
    """Read a YAML file and validate it as ``model``; errors name the file and the key.

    ``inputs(data, path)`` finds the input files the file names (see
    :func:`section_inputs`); then ``overrides`` (``dotted.key=value``, whose paths stay
    relative to the working directory) are applied before validation, and so are the
    top-level values of ``replace`` (as given, not read as YAML: a command line's journal
    path, say), which the file then need not hold.

    Raises:
        DataNotFoundError: the file, or an input file it names, does not exist.
        ConfigError: bad YAML, not a mapping, or a bad key or value.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"{what} file {str(path)!r} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with keys {keys}")
    mistake = _other_kind(data, what, path)
    if mistake:
        raise ConfigError(f"{path}: {mistake}")
    if inputs is not None:  # the keys overrides set are theirs, not the file's
        data = inputs(_without(apply_overrides(data, overrides), overrides), path)
    data = {**apply_overrides(data, overrides), **(replace or {})}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(
            f"{path}: {format_validation_error(exc, '')}".replace(": .", ": ")
        ) from None


def _without(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """``data`` without the keys ``dotted.key=value`` overrides set (which set them
    again): their paths are the command line's, from the working directory. A ``name``
    stays: it is no path, and says whose input files the section's keys are."""
    out = dict(data)
    for item in overrides:
        keys = _override_keys(item)[0]
        node = out
        for k in keys[:-1]:
            if not isinstance(node.get(k), Mapping):
                break
            node[k] = node = dict(node[k])
        else:
            if keys and keys[-1] != "name":
                node.pop(keys[-1], None)
    return out


def _other_kind(data: Mapping[str, Any], what: str, path: Path) -> str | None:
    """What to say when a tuning file is read as a comparison file (``what`` is
    ``comparison``) or the converse (``config``), else None: a comparison has
    ``problems``/``strategies``, a tuning file a single ``strategy``."""
    comparison = "problems" in data or "strategies" in data
    if what == "config" and comparison:
        return (
            "this is a comparison file (it has `problems`/`strategies`): run "
            f"`gpautotune compare {path}`"
        )
    if what == "comparison" and not comparison and "strategy" in data:
        return (
            "this is a tuning file (it has `strategy`, not `strategies`): run "
            f"`gpautotune tune {path}`"
        )
    return None


def load_config(path: str | os.PathLike[str], overrides: Sequence[str] = ()) -> TuneConfig:
    """Read and validate a tuning YAML file (with ``dotted.key=value`` overrides); its
    input files (the problem's, ``warm_start``) are found from the working directory,
    else from the file's folder (:func:`section_inputs`)."""
    return load_yaml_model(
        path,
        TuneConfig,
        "config",
        "problem, strategy, budget, ...",
        overrides,
        inputs=_tuning_inputs,
    )


def _tuning_inputs(data: dict[str, Any], file: Path) -> dict[str, Any]:
    """A tuning file's ``data`` with its input files found (:func:`section_inputs`, and
    ``warm_start``); storage, an output, stays relative to the working directory."""
    out = dict(data)
    if isinstance(out.get("problem"), Mapping):
        out["problem"] = section_inputs(out["problem"], file)
    if isinstance(out.get("warm_start"), str):
        out["warm_start"] = find_input(out["warm_start"], file, "warm_start")
    return out


def section_inputs(
    section: Mapping[str, Any],
    file: Path,
    where: str = "",
    *,
    factory_names: bool = False,
    allow_imports: bool = False,
) -> dict[str, Any]:
    """A problem section of YAML ``file`` with the input files its problem marks
    (:class:`~gpautotune.problems.input_files.InputFile`) found from the working
    directory, else from the file's folder (rewritten to that file's absolute path).

    A section whose problem is unknown (or not to be imported) is returned as it is: its
    check says what is wrong.

    Raises:
        DataNotFoundError: an input file in neither place; the message starts with its
            key (``<where>source``).
    """
    name = section.get("name")
    if not isinstance(name, str):
        return dict(section)
    try:
        factory, _ = _problem_factory(name, factory_names, allow_imports)
    except ConfigError:
        return dict(section)

    def wrapped(inner: Mapping[str, Any], key: str) -> dict[str, Any]:
        return section_inputs(
            inner, file, key, factory_names=factory_names, allow_imports=allow_imports
        )

    return resolve_input_files(factory, section, file, where, wrapped)


def _problem_factory(
    name: str, factory_names: bool, allow_imports: bool, where: str | None = None
) -> tuple[Callable[..., Problem], dict[str, Any]]:
    """The registry's factory, or (with ``factory_names``) the ``module:attribute`` one a
    name with a colon names, imported only with the user's opt-in (``allow_imports``)."""
    if ":" not in name or not factory_names:
        return problem_factory(name)
    return import_object(name, allowed=allow_imports, key=where or f"problem {name!r}"), {}


def check_problem(
    section: Section,
    where: str | None = None,
    *,
    factory_names: bool = False,
    allow_imports: bool = False,
) -> dict[str, Any]:
    """The options of a problem section, checked against its factory's signature.

    Args:
        section: the problem's name and options.
        where: what messages name first (default ``problem (<name>)``).
        factory_names: also accept ``package.module:factory`` names (comparison files).
        allow_imports: the user's opt-in to importing such a factory.

    Raises:
        ConfigError: an unknown problem or option, a value of the wrong type, or a
            ``module:factory`` name without the opt-in.
    """
    factory, extra = _problem_factory(section.name, factory_names, allow_imports, where)
    where = where or f"problem ({section.name})"
    return validate_options(factory, section.options, where, skip=tuple(extra))


def build_problem(
    section: Section, *, factory_names: bool = False, allow_imports: bool = False
) -> Problem:
    """The problem a section names: a registry name or, with ``factory_names`` (comparison
    files), a ``package.module:factory`` to import.

    ``allow_imports`` is the user's opt-in to the Python code the section names: a
    ``module:factory`` name, and names of code in its options (passed to factories that
    take it); a file cannot set it.
    """
    factory, extra = _problem_factory(section.name, factory_names, allow_imports)
    options = check_problem(section, factory_names=factory_names, allow_imports=allow_imports)
    if OPT_IN in inspect.signature(factory).parameters:
        options[OPT_IN] = allow_imports
    return factory(**extra, **options)


def check_strategy(section: Section, where: str | None = None) -> None:
    """Check a strategy section's options (its settings dataclass; see
    :mod:`gpautotune.strategies._settings`) without building it."""
    cls = strategy_class(section.name)
    cls.Settings.build(section.options, where or f"strategy {section.name!r}")


def build_strategy(section: Section, problem: Problem | Space, seed: int | None) -> Strategy:
    """The strategy a section names, for ``problem`` (or its space), with ``seed``."""
    space = problem if isinstance(problem, Space) else problem.space
    return strategy_class(section.name)(space, seed=seed, **section.options)


def warm_start_trials(config: TuneConfig, problem: Problem) -> list[Trial]:
    """Trials of the config's warm-start file, or none: a CSV or Parquet table (objective
    column ``value``), a T4 results file or a Kernel Tuner cache, read for ``problem``
    (:func:`~gpautotune.tuner.import_trials`)."""
    return import_trials(config.warm_start, problem) if config.warm_start else []
