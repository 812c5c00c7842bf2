"""A user's kernel as a tuning problem: everything but the device, validated once.

:class:`KernelSpec` holds what the OpenCL and C kernel problems share: the source with
its tunable ``#define`` parameters, the arguments, the sizes, the reference answer, the
objective and the metrics. :func:`kernel_spec` builds it from the keys of a YAML file
or the keywords of :func:`~gpautotune.problems.kernel.tune_kernel`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.problems.input_files import is_file
from gpautotune.problems.kernel._answer import Answer, describe_answer
from gpautotune.problems.kernel._arguments import Argument, parse_arguments
from gpautotune.problems.kernel._params import space_from_tune_params
from gpautotune.problems.kernel._values import compile_value, evaluate
from gpautotune.space import Space

__all__ = ["KernelSpec", "Objective", "kernel_spec", "read_source"]


def read_source(source: str | Path) -> tuple[str, str | None]:
    """The kernel text and its file (``None`` when ``source`` is the code itself).

    A string with a line break is code, and so is one that names no file but holds a
    brace (a kernel's body: ``__kernel void k(...) { ... }`` on one line); anything else
    is a path, relative to the working directory (a YAML file's relative path is found
    beforehand, from its folder too: see :mod:`gpautotune.problems.input_files`).

    Raises:
        ConfigError: a path that does not exist.
    """
    if isinstance(source, str) and ("\n" in source or ("{" in source and not is_file(source))):
        return source, None
    path = Path(source)
    if not is_file(path):
        raise ConfigError(
            f"source: no file {str(path)!r} (give a path, relative to the working directory, "
            "or the kernel's code itself)"
        )
    return path.read_text(), str(path.resolve())


@dataclass(frozen=True)
class Objective:
    """What is minimised: the kernel time in seconds, or a metric computed from it.

    Attributes:
        name: ``time`` or one of :attr:`metrics`.
        metrics: name -> expression over ``time`` (seconds), the sizes and parameters.
        higher_is_better: for a metric objective (GB/s, GFLOP/s), the tuner minimises
            ``1 / metric``; a metric where lower is better is minimised as it is.
    """

    name: str = "time"
    metrics: Mapping[str, str] = field(default_factory=dict)
    higher_is_better: bool = False

    def evaluate(self, time_s: float, scope: Mapping[str, Any]) -> dict[str, float]:
        """Every metric at kernel time ``time_s`` (``scope``: sizes and parameters)."""
        values = {**scope, "time": time_s}
        out = {}
        for name, text in self.metrics.items():
            expr = compile_value(text, values, f"metrics.{name}")
            out[name] = float(evaluate(expr, values))
        return out

    def value(self, time_s: float, metrics: Mapping[str, float]) -> float | None:
        """The minimised value, or ``None`` when the metric is not a usable number."""
        if self.name == "time":
            return time_s
        metric = metrics[self.name]
        if not math.isfinite(metric) or (self.higher_is_better and metric <= 0):
            return None
        return 1.0 / metric if self.higher_is_better else metric


@dataclass(frozen=True)
class KernelSpec:
    """A kernel to tune, independent of where it runs (see :func:`kernel_spec`)."""

    kernel: str
    source: str
    source_path: str | None
    arguments: tuple[Argument, ...]
    sizes: Mapping[str, int]
    space: Space
    defines: Mapping[str, Any]
    answer: Answer
    atol: float
    rtol: float
    objective: Objective
    iterations: int
    seed: int
    allow_imports: bool

    @property
    def argument_names(self) -> list[str]:
        return [a.name for a in self.arguments]

    def scope(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Names expressions see for a configuration: the sizes and the parameters."""
        return {**self.sizes, **config}

    def define_values(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The tuning parameters and the file's ``defines`` (evaluated) for one configuration."""
        scope = self.scope(config)
        extra = {}
        for name, text in self.defines.items():
            value = evaluate(compile_value(text, scope, f"defines.{name}"), scope)
            extra[name] = value.item() if hasattr(value, "item") else value
        return {**dict(config), **extra}

    def materialise(self) -> dict[str, Any]:
        """Every argument's value (``None`` for local buffers), by name, in order."""
        values = {
            a.name: a.materialise(
                self.sizes,
                self.seed + i,
                allow_imports=self.allow_imports,
                where=f"arguments.{i} ({a.name})",
            )
            for i, a in enumerate(self.arguments)
        }
        return {
            k: np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v
            for k, v in values.items()
        }

    def describe(self) -> dict[str, Any]:
        """What identifies the kernel in a run's settings (the source by its hash)."""
        return {
            "kernel": self.kernel,
            "source": self.source_path or "<string>",
            "source_sha256": hashlib.sha256(self.source.encode()).hexdigest()[:16],
            "sizes": dict(self.sizes),
            "defines": {k: str(v) for k, v in self.defines.items()},
            "arguments": [a.describe() for a in self.arguments],
            "answer": describe_answer(self.answer),
            "atol": self.atol,
            "rtol": self.rtol,
            "objective": self.objective.name,
            "metrics": dict(self.objective.metrics),
            "iterations": self.iterations,
            "seed": self.seed,
        }


def _sizes(sizes: Mapping[str, Any] | None) -> dict[str, int]:
    out = {}
    for k, v in dict(sizes or {}).items():
        if not str(k).isidentifier():
            raise ConfigError(f"sizes: {k!r} is not an identifier")
        if isinstance(v, bool) or not isinstance(v, int):
            raise ConfigError(f"sizes.{k}: a size is a whole number, got {v!r}")
        out[str(k)] = v
    return out


def _objective(
    objective: str, metrics: Mapping[str, str] | None, higher_is_better: bool | None, names: Any
) -> Objective:
    metrics = {str(k): str(v) for k, v in dict(metrics or {}).items()}
    for name, text in metrics.items():
        compile_value(text, [*names, "time"], f"metrics.{name}")
    if objective != "time" and objective not in metrics:
        raise ConfigError(
            f"objective {objective!r} is neither 'time' nor one of the metrics {sorted(metrics)}"
        )
    if objective == "time" and higher_is_better:
        raise ConfigError("objective 'time' is minimised; higher_is_better applies to metrics")
    better = objective != "time" if higher_is_better is None else bool(higher_is_better)
    return Objective(objective, metrics, better)


def kernel_spec(
    *,
    kernel: str,
    source: str | Path,
    arguments: Sequence[Any] | Mapping[str, Any],
    tune_params: Mapping[str, Sequence[Any]],
    restrictions: Sequence[str | Callable[..., Any]] | str | Callable[..., Any] | None = None,
    sizes: Mapping[str, int] | None = None,
    defines: Mapping[str, Any] | None = None,
    answer: Any = None,
    atol: float = 1e-6,
    rtol: float = 0.0,
    objective: str = "time",
    metrics: Mapping[str, str] | None = None,
    higher_is_better: bool | None = None,
    iterations: int = 7,
    seed: int = 0,
    allow_imports: bool = False,
) -> KernelSpec:
    """Validate a kernel description (the keys of the ``opencl-kernel`` and ``c-kernel``
    problems, documented there) and build its :class:`KernelSpec`.

    Raises:
        ConfigError: the first mistake found, naming its key.
    """
    text, path = read_source(source)
    if not kernel or not str(kernel).isidentifier():
        raise ConfigError(f"kernel: {kernel!r} is not a function name")
    if iterations < 1:
        raise ConfigError(f"iterations must be >= 1, got {iterations}")
    if atol < 0 or rtol < 0:
        raise ConfigError(f"atol and rtol must be >= 0, got {atol}, {rtol}")
    size_values = _sizes(sizes)
    space = space_from_tune_params(
        tune_params, () if restrictions is None else restrictions, name=str(kernel)
    )
    clash = sorted(set(size_values) & set(space.names))
    if clash:
        raise ConfigError(f"sizes and tune_params share the names {clash}")
    args = parse_arguments(arguments)
    for i, arg in enumerate(args):
        if arg.spec is not None and arg.spec.factory is not None:
            from gpautotune.problems._imports import import_object

            import_object(arg.spec.factory, allowed=allow_imports, key=f"arguments.{i}.factory")
    scope = [*size_values, *space.names]
    for key, text_ in dict(defines or {}).items():
        compile_value(text_, scope, f"defines.{key}")
    return KernelSpec(
        kernel=str(kernel),
        source=text,
        source_path=path,
        arguments=tuple(args),
        sizes=size_values,
        space=space,
        defines=dict(defines or {}),
        answer=Answer(
            answer,
            [a.name for a in args],
            list(size_values),
            allow_imports=allow_imports,
            non_arrays={
                a.name: "a local buffer" if a.is_local else "a scalar argument"
                for a in args
                if a.is_local or a.is_scalar
            },
        ),
        atol=float(atol),
        rtol=float(rtol),
        objective=_objective(objective, metrics, higher_is_better, scope),
        iterations=int(iterations),
        seed=int(seed),
        allow_imports=bool(allow_imports),
    )
