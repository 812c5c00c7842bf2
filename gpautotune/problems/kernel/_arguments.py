"""Kernel arguments: arrays and scalars, made by simple generators or given as data.

In a YAML file every argument is a mapping with a ``name``, an optional ``dtype``
(``float32`` for arrays, ``int32`` for scalars by default) and exactly one source:

=================  ==============================================================
``random: SHAPE``  uniform in [0, 1) (integers 0..99 for integer dtypes), seeded
``zeros: SHAPE``   zeros
``ones: SHAPE``    ones
``arange: SHAPE``  0, 1, 2, ... reshaped to SHAPE
``value: EXPR``    a scalar, e.g. ``n`` or ``0.5``
``file: PATH``     a NumPy ``.npy`` file (read without pickle)
``factory: M:F``   ``F(**sizes)`` from module ``M``: Python code, imported only with
                   the user's opt-in (``--allow-imports``)
``local: EXPR``    an OpenCL ``__local`` buffer of EXPR elements (may use parameters)
=================  ==============================================================

A SHAPE is a size expression or a list of them (``[n, n]``), over the problem's sizes.
In Python, arguments may also be NumPy arrays and scalars, given directly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from gpautotune.exceptions import ConfigError, format_validation_error
from gpautotune.problems.kernel._values import compile_value, evaluate, integer

__all__ = [
    "ArgumentSpec",
    "Argument",
    "parse_arguments",
    "C_TYPES",
    "SOURCES",
]

#: NumPy dtypes an argument may have, with their C types.
C_TYPES = {
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "uint8": "uint8_t",
    "int16": "int16_t",
    "uint16": "uint16_t",
    "int32": "int32_t",
    "uint32": "uint32_t",
    "int64": "int64_t",
    "uint64": "uint64_t",
}
#: The keys that say where an argument's data comes from.
SOURCES = ("random", "zeros", "ones", "arange", "value", "file", "factory", "local")
Shape = int | str | list[int | str]


class ArgumentSpec(BaseModel):
    """One argument as written in a file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    dtype: str | None = None
    random: Shape | None = None
    zeros: Shape | None = None
    ones: Shape | None = None
    arange: Shape | None = None
    value: int | float | str | None = None
    file: str | None = None
    factory: str | None = None
    local: int | str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ArgumentSpec:
        given = [k for k in SOURCES if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of {list(SOURCES)}, got {given or 'none'}")
        if not self.name.isidentifier():
            raise ValueError(f"name {self.name!r} must be an identifier")
        if self.dtype is not None and self.dtype not in C_TYPES:
            raise ValueError(f"dtype {self.dtype!r} is none of {sorted(C_TYPES)}")
        return self

    @property
    def source(self) -> str:
        return next(k for k in SOURCES if getattr(self, k) is not None)

    @property
    def numpy_dtype(self) -> np.dtype:
        default = "int32" if self.source == "value" else "float32"
        return np.dtype(self.dtype or default)


@dataclass(frozen=True)
class Argument:
    """A named argument: a spec to materialise, or data given in Python."""

    name: str
    spec: ArgumentSpec | None = None
    data: np.ndarray | np.generic | None = None

    @property
    def is_local(self) -> bool:
        return self.spec is not None and self.spec.local is not None

    @property
    def is_scalar(self) -> bool:
        """A single value passed by value (``value:``, or NumPy data such as ``np.int32(n)``)."""
        if self.spec is not None:
            return self.spec.source == "value"
        return isinstance(self.data, np.generic)

    def describe(self) -> dict[str, Any]:
        """What identifies the argument in a run's settings (data by shape, type and hash)."""
        if self.spec is not None:
            return self.spec.model_dump(exclude_none=True)
        import hashlib

        data = np.asarray(self.data)
        digest = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()[:16]
        return {
            "name": self.name,
            "dtype": str(data.dtype),
            "shape": list(data.shape),
            "sha256": digest,
        }

    def materialise(
        self, sizes: Mapping[str, int], seed: int, *, allow_imports: bool, where: str
    ) -> np.ndarray | np.generic | None:
        """The argument's data (``None`` for a local buffer, sized per configuration)."""
        if self.spec is None:
            return self.data
        return _make(self.spec, sizes, seed, allow_imports=allow_imports, where=where)

    def local_bytes(self, values: Mapping[str, Any], where: str) -> int:
        """Bytes of a local buffer for the sizes and parameters in ``values``."""
        assert self.spec is not None and self.spec.local is not None
        expr = compile_value(self.spec.local, values, f"{where}.local")
        return integer(expr, values, f"{where}.local") * self.spec.numpy_dtype.itemsize


def _shape(shape: Shape, sizes: Mapping[str, int], where: str) -> tuple[int, ...]:
    items = shape if isinstance(shape, list) else [shape]
    out = tuple(integer(compile_value(s, sizes, where), sizes, where) for s in items)
    if any(n < 0 for n in out):
        raise ConfigError(f"{where}: negative extent in shape {out}")
    return out


def _make(
    spec: ArgumentSpec, sizes: Mapping[str, int], seed: int, *, allow_imports: bool, where: str
) -> np.ndarray | np.generic | None:
    dtype, source = spec.numpy_dtype, spec.source
    key = f"{where}.{source}"
    if source == "local":
        return None
    if source == "value":
        return dtype.type(evaluate(compile_value(spec.value, sizes, key), sizes))
    if source == "file":
        return _load(spec.file, dtype if spec.dtype else None, key)
    if source == "factory":
        from gpautotune.problems._imports import import_object

        function = import_object(spec.factory, allowed=allow_imports, key=key)
        try:
            made = np.asarray(function(**sizes), dtype=dtype if spec.dtype else None)
        except Exception as exc:  # noqa: BLE001 - the user's code: named, with its error
            raise ConfigError(f"{key}: {spec.factory} failed: {type(exc).__name__}: {exc}") from exc
        return made
    shape = _shape(getattr(spec, source), sizes, key)
    if source == "random":
        rng = np.random.default_rng(seed)
        if dtype.kind in "iu":
            return rng.integers(0, 100, size=shape).astype(dtype)
        return rng.random(shape).astype(dtype)
    if source == "arange":
        return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return (np.zeros if source == "zeros" else np.ones)(shape, dtype=dtype)


def _load(path: str | None, dtype: np.dtype | None, key: str) -> np.ndarray:
    file = Path(str(path))
    if not file.is_file():
        raise ConfigError(f"{key}: no file {str(file)!r}")
    try:
        data = np.load(file, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{key}: {file} is not a NumPy .npy file: {exc}") from None
    return data if dtype is None else data.astype(dtype)


def parse_arguments(arguments: Sequence[Any] | Mapping[str, Any]) -> list[Argument]:
    """Arguments from file specs (mappings) and/or NumPy data (Python).

    ``arguments`` is a list (NumPy data is named ``arg0``, ``arg1``, ...) or, in Python, a
    mapping of name to NumPy data or spec.

    Raises:
        ConfigError: a bad spec (naming the argument's position and key), a repeated
            name, or something that is neither a spec nor NumPy data.
    """
    if isinstance(arguments, Mapping):
        arguments = [
            {**item, "name": name} if isinstance(item, Mapping) else (name, item)
            for name, item in arguments.items()
        ]
    out: list[Argument] = []
    for i, item in enumerate(arguments):
        named = isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
        name, item = item if named else (f"arg{i}", item)
        if isinstance(item, ArgumentSpec):
            out.append(Argument(item.name, spec=item))
        elif isinstance(item, Mapping):
            try:
                spec = ArgumentSpec.model_validate(dict(item))
            except ValidationError as exc:
                raise ConfigError(format_validation_error(exc, f"arguments.{i}")) from None
            out.append(Argument(spec.name, spec=spec))
        elif isinstance(item, (np.ndarray, np.generic)):
            out.append(Argument(name, data=item))
        else:
            raise ConfigError(
                f"arguments.{i}: expected a NumPy array, a NumPy scalar (np.int32(n)) or a "
                f"mapping such as {{name: a, random: n}}, got {type(item).__name__}"
            )
    names = [a.name for a in out]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"arguments: names {repeated} repeat")
    return out
