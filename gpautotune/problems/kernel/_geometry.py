"""Work sizes of an OpenCL launch from the problem size and the parameters (Kernel Tuner's rules).

The local size in dimension ``d`` is the value of the ``d``-th block-size name
(``block_size_x``, ``block_size_y``, ``block_size_z`` unless renamed), or 256, 1, 1 when
that name is not a tuning parameter. The number of work groups is
``ceil(problem_size[d] / grid_div[d])``, where the divisor defaults to the local size
and may be an expression or a list of names multiplied together (``[block_size_x,
tile]``); the global size is groups × local size.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpautotune.exceptions import ConfigError
from gpautotune.problems.kernel._values import compile_value, integer

__all__ = ["Geometry", "geometry", "DEFAULT_BLOCK_SIZE_NAMES"]

DEFAULT_BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
_DEFAULT_LOCAL = (256, 1, 1)
Divisor = int | str | Sequence[int | str] | None


@dataclass(frozen=True)
class Geometry:
    """How global and local work sizes follow from sizes and parameters.

    Attributes:
        problem_size: one expression per dimension (1 to 3).
        grid_div: one divisor expression per dimension (``None``: the local size).
        block_size_names: the parameters that give the local size, per dimension.
    """

    problem_size: tuple[str, ...]
    grid_div: tuple[str | None, ...]
    block_size_names: tuple[str, ...]

    def local_size(self, config: Mapping[str, Any]) -> tuple[int, ...]:
        return tuple(
            int(config.get(self.block_size_names[d], _DEFAULT_LOCAL[d]))
            for d in range(len(self.problem_size))
        )

    def block_defines(self, config: Mapping[str, Any]) -> dict[str, int]:
        """``block_size_*`` values that are not tuning parameters, for ``#define`` lines."""
        local = self.local_size(config)
        return {n: v for n, v in zip(self.block_size_names, local, strict=False) if n not in config}

    def extent(self, d: int, scope: Mapping[str, Any]) -> int:
        """The problem size in dimension ``d``; ``scope`` holds the sizes and the parameters.

        Raises:
            ConfigError: the expression gives no whole number of at least 1 here (an empty
                or negative range would launch nothing and time it as fast).
        """
        text = self.problem_size[d]
        extent = integer(compile_value(text, scope, f"problem_size[{d}]"), scope, "problem_size")
        if extent < 1:
            raise ConfigError(
                f"problem_size[{d}]: {text!r} gives {extent}, not a positive work size"
            )
        return extent

    def check(self, sizes: Mapping[str, int], parameters: Sequence[str]) -> None:
        """Raise for a dimension whose problem size the sizes alone fix below 1 (one that
        a parameter takes part in is checked per configuration, by :meth:`sizes`).

        Raises:
            ConfigError: such a dimension, named.
        """
        for d, text in enumerate(self.problem_size):
            expr = compile_value(text, [*sizes, *parameters], f"problem_size[{d}]")
            if expr.names <= set(sizes):
                self.extent(d, sizes)

    def sizes(self, scope: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(global, local)`` work sizes; ``scope`` holds the sizes and the parameters.

        Raises:
            ConfigError: an expression gives no positive whole number here.
        """
        local = self.local_size(scope)
        global_size = []
        for d in range(len(self.problem_size)):
            extent = self.extent(d, scope)
            div_text = self.grid_div[d]
            div = (
                local[d]
                if div_text is None
                else integer(
                    compile_value(div_text, scope, f"grid_div[{d}]"), scope, f"grid_div[{d}]"
                )
            )
            if div < 1 or local[d] < 1:
                raise ConfigError(f"dimension {d}: grid divisor {div} and local size {local[d]}")
            global_size.append(math.ceil(extent / div) * local[d])
        return tuple(global_size), local


def _divisor(value: Divisor, key: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, Sequence) and value:
        return " * ".join(f"({v})" for v in value)
    raise ConfigError(
        f"{key}: a divisor is a number, an expression or a list of names, got {value!r}"
    )


def geometry(
    problem_size: int | str | Sequence[int | str],
    grid_div: Sequence[Divisor],
    block_size_names: Sequence[str] | None,
    names: Sequence[str],
) -> Geometry:
    """Validate and build a :class:`Geometry` (``names``: sizes and parameters).

    Raises:
        ConfigError: more than 3 dimensions, or an expression naming something unknown.
    """
    dims = list(problem_size) if isinstance(problem_size, (list, tuple)) else [problem_size]
    if not 1 <= len(dims) <= 3:
        raise ConfigError(f"problem_size: 1 to 3 dimensions, got {problem_size!r}")
    blocks = tuple(block_size_names or DEFAULT_BLOCK_SIZE_NAMES)
    if len(blocks) < len(dims):
        raise ConfigError(f"block_size_names: one name per dimension, got {list(blocks)}")
    divisors = tuple(_divisor(grid_div[d], f"grid_div_{'xyz'[d]}") for d in range(len(dims)))
    for d, text in enumerate(dims):
        compile_value(text, names, f"problem_size[{d}]")
    for d, text in enumerate(divisors):
        if text is not None:
            compile_value(text, names, f"grid_div_{'xyz'[d]}")
    for d, extra in enumerate(grid_div[len(dims) :], start=len(dims)):
        if extra is not None:
            raise ConfigError(f"grid_div_{'xyz'[d]} given for a {len(dims)}-dimensional problem")
    return Geometry(tuple(str(t) for t in dims), divisors, blocks)
