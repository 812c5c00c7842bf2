"""The policy space: one bit width per quantizable layer, optionally under a size limit.

A policy ``b = (b_1, ..., b_L)`` stores ``S(b) = sum_l bytes_l(b_l)`` bytes, where
``bytes_l(b) = ceil(n_l b / 8) + 4 m_l(b)`` (:func:`~._quantize.weight_bytes`: ``n_l``
weights, ``m_l`` float32 scales or centroids). ``S`` is a known, separable function, so
the limit ``S(b) <= limit`` is a predicate of the :class:`~gpautotune.space.Space`,
evaluated vectorised by :class:`PolicySize` (one table look-up per layer column), and the
constrained samplers (FILTER_SOBOL, rejection) only ever propose policies that fit.
Without a limit (``size_limit=None``: size in the objective instead, seed 003 §13.6.3)
every policy is valid.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gpautotune.exceptions import ConfigError
from gpautotune.problems.quantization._layers import LayerInfo, parameter_names
from gpautotune.problems.quantization._quantize import weight_bytes
from gpautotune.space import Config, IntRange, Ordinal, Space

__all__ = [
    "BitsSpec",
    "PolicySize",
    "PolicySpace",
    "check_bit_widths",
    "check_size_limit",
    "resolve_size_limit",
]

BitsSpec = Iterable[int] | Mapping[str, Iterable[int]]
SIZE_COLUMN = "size_bytes"


@dataclass(frozen=True)
class PolicySize:
    """Derived column ``size_bytes = sum_l tables[l][b_l]`` over the layer columns.

    A generalised :class:`~gpautotune.problems.synthetic.WeightedSum`: ``tables[l][b]`` is
    the exact byte count of layer ``l`` at ``b`` bits (affine in ``b`` up to the byte
    rounding and, for k-means, the codebook).
    """

    names: tuple[str, ...]
    tables: tuple[tuple[int, ...], ...]
    __name__ = "policy_size"

    def __call__(self, cols: Mapping[str, np.ndarray]) -> np.ndarray:
        total = np.zeros(len(cols[self.names[0]]), dtype=np.int64)
        for name, table in zip(self.names, self.tables, strict=True):
            total += np.asarray(table, dtype=np.int64)[np.asarray(cols[name], dtype=np.int64)]
        return total


def check_size_limit(size_limit: object) -> None:
    """Refuse a size limit that is neither bytes (a positive int), a fraction in (0, 1)
    (a float), nor None."""
    if size_limit is None:
        return
    if isinstance(size_limit, (int, np.integer)) and not isinstance(size_limit, bool):
        if size_limit <= 0:
            raise ConfigError(f"size_limit in bytes must be positive, got {size_limit}")
        return
    if isinstance(size_limit, (float, np.floating)):
        if not 0.0 < size_limit < 1.0:
            raise ConfigError(
                f"a float size_limit is a fraction in (0, 1) of the float32 weight size, got "
                f"{size_limit}; give bytes as an int, or size_limit=None with a size_weight "
                "for no limit"
            )
        return
    raise ConfigError(
        f"size_limit must be bytes (int) or a fraction in (0, 1) (float), got {size_limit!r}"
    )


def resolve_size_limit(size_limit: int | float | None, float32_bytes: int) -> int | None:
    """Bytes allowed: an int is bytes; a float is a fraction in (0, 1) of the float32
    size; None is no limit."""
    check_size_limit(size_limit)
    if size_limit is None:
        return None
    if isinstance(size_limit, (float, np.floating)):
        return int(math.floor(size_limit * float32_bytes))
    return int(size_limit)


def check_bit_widths(levels: object, where: str = "bits") -> tuple[int, ...]:
    """The sorted distinct bit widths of ``levels``, a list of ints within 1..16."""
    if isinstance(levels, (str, bytes, Mapping)) or not isinstance(levels, Iterable):
        raise ConfigError(
            f"{where} must be a list of bit widths (ints such as [2, 4, 8] or range(1, 9)), "
            f"or a mapping layer name -> such a list; got {levels!r}"
        )
    levels = list(levels)
    odd = [b for b in levels if isinstance(b, bool) or not isinstance(b, (int, np.integer))]
    if odd:
        raise ConfigError(f"{where}: bit widths must be ints, got {odd} in {levels}")
    widths = tuple(sorted({int(b) for b in levels}))
    if not widths or widths[0] < 1 or widths[-1] > 16:
        raise ConfigError(f"{where}: bit widths must be a non-empty set within 1..16, got {widths}")
    return widths


def _levels(layers: Sequence[LayerInfo], bits: BitsSpec) -> tuple[tuple[int, ...], ...]:
    if isinstance(bits, Mapping):
        unknown = sorted(set(bits) - {layer.name for layer in layers})
        if unknown:
            raise ConfigError(f"bits names layers {unknown} that are not quantized")
        default = tuple(range(1, 9))
        return tuple(
            check_bit_widths(bits.get(layer.name, default), f"bits[{layer.name!r}]")
            for layer in layers
        )
    return (check_bit_widths(bits),) * len(layers)


@dataclass(frozen=True)
class PolicySpace:
    """Layers, allowed bit widths and the size limit, with the :class:`Space` they define.

    Build with :meth:`build`. Configurations of :attr:`space` map parameter names to bits;
    policies map layer (module) names to bits.
    """

    layers: tuple[LayerInfo, ...]
    levels: tuple[tuple[int, ...], ...]
    size_limit: int | None
    method: str = "uniform"
    names: tuple[str, ...] = field(init=False)
    space: Space = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = parameter_names([layer.name for layer in self.layers])
        object.__setattr__(self, "names", names)
        low = self.bytes_of(dict(zip(names, (lv[0] for lv in self.levels), strict=True)))
        if self.size_limit is not None and self.size_limit < low:
            raise ConfigError(
                f"size limit {self.size_limit} bytes is below the smallest policy "
                f"({low} bytes, every layer at its fewest bits; "
                f"float32 size {self.float32_bytes}); raise size_limit"
            )
        params = [_parameter(n, lv) for n, lv in zip(names, self.levels, strict=True)]
        tables = tuple(self._table(layer) for layer in self.layers)
        space = Space(
            params,
            constraints=[f"{SIZE_COLUMN} <= {self.size_limit}"]
            if self.size_limit is not None
            else [],
            derived={SIZE_COLUMN: PolicySize(names, tables)},
            name="quantization-policy",
        )
        object.__setattr__(self, "space", space)

    @classmethod
    def build(
        cls,
        layers: Sequence[LayerInfo],
        *,
        size_limit: int | float | None,
        bits: BitsSpec = range(1, 9),
        method: str = "uniform",
    ) -> PolicySpace:
        """A policy space for ``layers``; ``size_limit`` in bytes, as a float32 fraction, or
        None (no limit)."""
        layers = tuple(layers)
        float32 = sum(4 * layer.n_weights for layer in layers)
        return cls(layers, _levels(layers, bits), resolve_size_limit(size_limit, float32), method)

    def _table(self, layer: LayerInfo) -> tuple[int, ...]:
        top = max(max(lv) for lv in self.levels)
        return (0,) + tuple(
            weight_bytes(layer.n_weights, layer.out_channels, b, self.method)
            for b in range(1, top + 1)
        )

    # ------------------------------------------------------------- sizes
    @property
    def float32_bytes(self) -> int:
        """Bytes of the quantizable weights in float32."""
        return sum(4 * layer.n_weights for layer in self.layers)

    def bytes_of(self, config: Mapping[str, int]) -> int:
        """Exact bytes of a configuration (parameter names -> bits), valid or not."""
        return sum(
            weight_bytes(layer.n_weights, layer.out_channels, int(config[n]), self.method)
            for layer, n in zip(self.layers, self.names, strict=True)
        )

    def sizes(self, index: np.ndarray) -> np.ndarray:
        """Bytes of each row of an index matrix (vectorised)."""
        return np.asarray(self.space.columns(index)[SIZE_COLUMN], dtype=np.int64)

    def mean_bits(self, config: Mapping[str, int]) -> float:
        """Average bits per weight ``sum_l n_l b_l / sum_l n_l``."""
        total = sum(layer.n_weights for layer in self.layers)
        return (
            sum(
                layer.n_weights * int(config[n])
                for layer, n in zip(self.layers, self.names, strict=True)
            )
            / total
        )

    # ------------------------------------------------------- conversions
    def to_policy(self, config: Mapping[str, Any]) -> dict[str, int]:
        """Layer name -> bits of a configuration."""
        return {
            layer.name: int(config[n]) for layer, n in zip(self.layers, self.names, strict=True)
        }

    def to_config(self, policy: Mapping[str, int]) -> Config:
        """Configuration of a policy (layer name -> bits)."""
        missing = [layer.name for layer in self.layers if layer.name not in policy]
        if missing:
            raise ConfigError(f"the policy gives no bit width for layers {missing}")
        return {
            n: int(policy[layer.name]) for layer, n in zip(self.layers, self.names, strict=True)
        }

    def uniform(self, bits: int) -> dict[str, int]:
        """The policy with every layer at ``bits``."""
        return {layer.name: int(bits) for layer in self.layers}

    def describe(self) -> dict[str, Any]:
        return {
            "layers": [layer.name for layer in self.layers],
            "levels": [list(lv) for lv in self.levels],
            "size_limit": self.size_limit,
            "method": self.method,
        }


def _parameter(name: str, levels: tuple[int, ...]) -> Ordinal:
    if len(levels) > 1 and levels == tuple(range(levels[0], levels[-1] + 1)):
        return IntRange(name, levels[0], levels[-1])
    return Ordinal(name, levels, scale="linear")
